import TestSupport
import Testing

@testable import BeaconBridgeCLI

/// The built binary's top-level behaviour: help, version, and sysexits codes for misuse.
@Suite struct CLITopLevelTests {
    @Test(arguments: ["--help", "-h", "help"])
    func helpListsEveryCommand(flag: String) async throws {
        let run = try await BuiltBinary.run([flag])
        #expect(run.status == 0)
        for command in ["run", "check-config", "decode", "replay", "simulate", "scan"] {
            #expect(run.stdout.contains("beaconbridge \(command)"), "help lacks \(command)")
        }
    }

    @Test func versionPrintsTheVersion() async throws {
        let run = try await BuiltBinary.run(["--version"])
        #expect(run.status == 0)
        #expect(run.lines == ["beaconbridge \(CommandLineTool.version)"])
    }

    @Test(arguments: [
        [], ["frobnicate"], ["run", "--bogus"], ["replay"], ["run", "--speed", "2"],
        ["replay", "x.btsnoop", "--speed", "fast"],
    ])
    func misuseIsAUsageError(arguments: [String]) async throws {
        let run = try await BuiltBinary.run(arguments)
        #expect(run.status == 64, "stderr: \(run.stderr)")
        #expect(!run.stderr.isEmpty)
    }

    @Test func runHelpExitsZero() async throws {
        let run = try await BuiltBinary.run(["run", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("beaconbridge run"))
    }

    @Test func runWithAMissingConfigFileSaysWhereToPointIt() async throws {
        let run = try await BuiltBinary.run(["run", "--config", "/nonexistent/beaconbridge.yaml"])
        #expect(run.status == 66)
        #expect(run.stderr.contains("/nonexistent/beaconbridge.yaml"))
    }

    @Test func runRefusesABrokenConfigurationWithEveryProblem() async throws {
        let fixture = BuiltBinary.packageRoot + "/Tests/Fixtures/config/regions-broken.yaml"
        let run = try await BuiltBinary.run(["run", "--config", fixture])
        #expect(run.status == 78)
        let located = run.stderr.split(separator: "\n").filter { $0.hasPrefix(fixture + ":") }
        #expect(located.count >= 2, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("nothing started"))
    }
}
