import Foundation
import TestSupport
import Testing

/// Runs the built `beaconbridge` binary over the broken files in Tests/Fixtures/config. Each fixture states
/// what it must produce in `# expect: LINE:COL: KEYPATH: MESSAGE` header lines; the output must hold exactly
/// those problems (no more), each as `FILE:LINE:COL: KEYPATH: MESSAGE`, and exit 78.
@Suite struct CheckConfigCommandTests {
    static let packageRoot = URL(fileURLWithPath: BuiltBinary.packageRoot)
    static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures/config")

    /// Runs the binary in the fixtures directory with a clean environment (plus `environment`).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> BuiltBinary.Result {
        try await BuiltBinary.run(arguments, environment: environment, cleanEnvironment: true, directory: fixtures.path)
    }

    static let brokenFixtures: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") && !$0.hasPrefix("valid-") }.sorted()
    }()

    /// The `# expect:` lines of a fixture, without the prefix.
    static func expectations(in name: String) throws -> [String] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("# expect: ") }
            .map { String($0.dropFirst("# expect: ".count)) }
    }

    @Test func thereAreBrokenFixtures() {
        #expect(Self.brokenFixtures.count >= 12)
    }

    @Test(arguments: brokenFixtures)
    func brokenFileReportsEveryExpectedProblem(name: String) async throws {
        let expected = try Self.expectations(in: name)
        try #require(!expected.isEmpty, "\(name) has no `# expect:` lines")
        let result = try await Self.run(["check-config", "--config", name])
        #expect(result.status == 78)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let problems = lines.filter { $0.hasPrefix(name + ":") && !$0.hasPrefix(name + ": ") }
        #expect(problems == expected.map { "\(name):\($0)" })
        let count = expected.count
        #expect(lines.last == "\(name): \(count) problem\(count == 1 ? "" : "s") found")
    }

    @Test func validFilePrintsSummary() async throws {
        let result = try await Self.run(["check-config", "--config", "valid-minimal.yaml"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.contains("valid-minimal.yaml: configuration is valid"))
        #expect(result.stdout.contains("gateway: id=pi-kitchen name=\"Kitchen gateway\" room=kitchen"))
        #expect(result.stdout.contains("telemetry: every 2m"))
        #expect(result.stdout.contains("  rooms: off\n"))
    }

    @Test func summaryNamesTheRoomsSite() async throws {
        let result = try await Self.run(["check-config", "--config", "valid-rooms.yaml"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "  rooms: 3 gateway(s) in 3 room(s) (hall, kitchen, office), this gateway in hall, signal raw,"
                    + " replays wait for 3 gateway(s)\n"), "\(result.stdout)")
    }

    @Test func summaryNamesTheRoomsWithoutAGateway() async throws {
        let result = try await Self.run(["check-config", "--config", "valid-rooms-without-gateway.yaml"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "  rooms: 3 gateway(s) in 3 room(s) (bedroom, kitchen, living), this gateway in living, 1 room(s)"
                    + " without a gateway (office: named only by the fingerprint classifier, once every room is"
                    + " trained), signal raw\n"), "\(result.stdout)")
    }

    /// The shipped example names the packaged state directory, which exists where the service is installed
    /// (systemd's StateDirectory=) and usually not on a build machine: it is valid there too (issue 32), since
    /// the gateway creates the directory at start; a user who could not is warned, nothing more.
    /// A copy pointing the outbox at a temporary directory is valid everywhere.
    @Test func shippedExampleIsValid() async throws {
        let example = Self.packageRoot.appendingPathComponent("config/beaconbridge.yaml").path
        let result = try await Self.run(["check-config", "--config", example])
        #expect(result.status == 0, "\(result.stderr)")
        let located = result.stderr.split(separator: "\n").filter {
            $0.hasPrefix(example + ":") && !$0.hasPrefix(example + ": ")
        }
        if FileManager.default.fileExists(atPath: "/var/lib/beaconbridge") || access("/var/lib", W_OK | X_OK) == 0 {
            #expect(located.isEmpty, "\(result.stderr)")
        } else {
            #expect(located.count == 1, "\(result.stderr)")
            #expect(
                located.first?.contains("outbox.path: warning: directory `/var/lib/beaconbridge` does not exist")
                    == true,
                "\(result.stderr)")
        }

        let directory = try TestDirectory.make(prefix: "bb-example")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try String(contentsOfFile: example, encoding: .utf8)
        #expect(text.contains("path: /var/lib/beaconbridge/outbox.sqlite"))
        let copy = directory + "/beaconbridge.yaml"
        try text.replacingOccurrences(
            of: "path: /var/lib/beaconbridge/outbox.sqlite", with: "path: \(directory)/outbox.sqlite"
        )
        .write(toFile: copy, atomically: true, encoding: .utf8)
        let valid = try await Self.run(["check-config", "--config", copy])
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(valid.stdout.contains("regions: 2 (desk, office)"))
        #expect(valid.stdout.contains("broker: mqtt://localhost:1883"))
    }

    @Test func environmentVariableNamesTheFileAndOptionWins() async throws {
        let viaEnvironment = try await Self.run(
            ["check-config"], environment: ["BEACONBRIDGE_CONFIG": "wrong-values.yaml"])
        #expect(viaEnvironment.status == 78)
        #expect(viaEnvironment.stderr.contains("wrong-values.yaml:9:10: logging.level:"))
        let optionWins = try await Self.run(
            ["check-config", "--config=valid-minimal.yaml"],
            environment: ["BEACONBRIDGE_CONFIG": "wrong-values.yaml"])
        #expect(optionWins.status == 0)
    }

    @Test func missingFileExits66WithHowToFix() async throws {
        let result = try await Self.run(["check-config", "--config", "no-such-file.yaml"])
        #expect(result.status == 66)
        #expect(
            result.stderr.contains("configuration file no-such-file.yaml does not exist (check the --config argument)"))
        let builtIn = try await Self.run(["check-config"])
        if !FileManager.default.fileExists(atPath: "/etc/beaconbridge/beaconbridge.yaml") {
            #expect(builtIn.status == 66)
            #expect(builtIn.stderr.contains("/etc/beaconbridge/beaconbridge.yaml does not exist (pass --config FILE"))
        }
    }

    @Test func directoryIsUnreadable() async throws {
        let result = try await Self.run(["check-config", "--config", "."])
        #expect(result.status == 66)
        #expect(result.stderr.contains(".: cannot read: it is a directory"))
    }

    @Test(arguments: [["check-config", "--config"], ["check-config", "extra"], ["check-config", "-c", ""]])
    func usageErrorsExit64(arguments: [String]) async throws {
        let result = try await Self.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("Usage: beaconbridge check-config"))
    }

    @Test func helpExitsZero() async throws {
        let result = try await Self.run(["check-config", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("BEACONBRIDGE_CONFIG"))
    }
}

/// `http:` on a network address needs a read token (docs/status-page.md): refused without one, valid with one.
@Suite struct HTTPCheckConfigTests {
    @Test func aNetworkAddressNeedsAReadToken() async throws {
        let directory = try TestDirectory.make(prefix: "bb-http-check")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let base =
            "gateway: {id: pi}\noutbox: {path: \(directory)/o.sqlite}\nhttp:\n  enabled: true\n  listen: 0.0.0.0\n"
        try base.write(toFile: directory + "/open.yaml", atomically: true, encoding: .utf8)
        let open = try await BuiltBinary.run(
            ["check-config", "--config", directory + "/open.yaml"], cleanEnvironment: true)
        #expect(open.status == 78)
        #expect(open.stderr.contains("http.token_file: needed when http.listen (`0.0.0.0`) is not a loopback address"))
        try (base + "  token_env: BB_TEST_HTTP_TOKEN\n").write(
            toFile: directory + "/token.yaml", atomically: true, encoding: .utf8)
        let token = try await BuiltBinary.run(
            ["check-config", "--config", directory + "/token.yaml"], environment: ["BB_TEST_HTTP_TOKEN": "t0ken"],
            cleanEnvironment: true)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(!token.stdout.contains("t0ken") && !token.stderr.contains("t0ken"))
    }
}
