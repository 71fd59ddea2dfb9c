import Foundation
import TestSupport
import Testing

/// Runs the built `beaconbridge scan` over the real Android capture (replay) and against this machine's kernel.
@Suite struct ScanCommandTests {
    static let capture = BuiltBinary.androidCapture

    static func scan(_ arguments: [String]) async throws -> BuiltBinary.Result {
        try await BuiltBinary.run(["scan"] + arguments)
    }

    @Test func replayPrintsOneLinePerAdvertisingEvent() async throws {
        let run = try await Self.scan(["--replay", Self.capture])
        #expect(run.status == 0)
        // Tests/Fixtures/README.md: 412 LE Advertising Report events.
        #expect(run.lines.count == 412)
        let shape = /^[0-9]+\.[0-9]{6} 3e[0-9a-f]{2}02[0-9a-f]+$/
        #expect(run.lines.allSatisfy { $0.wholeMatch(of: shape) != nil })
        #expect(run.stderr.contains("412 advertising events, 0 dropped"))
    }

    @Test func replayAsJSONDecodesTheGoveeIBeacon() async throws {
        let run = try await Self.scan(["--replay", Self.capture, "--json"])
        #expect(run.status == 0)
        #expect(run.lines.count >= 412)
        #expect(run.lines.allSatisfy { $0.hasPrefix("{\"time\":") })
        for line in run.lines {
            #expect(throws: Never.self) { _ = try JSONSerialization.jsonObject(with: Data(line.utf8)) }
        }
        // The Govee H5072 carries an iBeacon in its scan response (Tests/Fixtures/README.md).
        #expect(run.lines.contains { $0.contains("\"format\":\"ibeacon\"") && $0.contains("\"scan_response\":true") })
    }

    @Test func usageErrors() async throws {
        #expect(try await Self.scan(["--frobnicate"]).status == 64)
        #expect(try await Self.scan(["--seconds", "-1"]).status == 64)
        #expect(try await Self.scan(["--adapter", "wlan0"]).status == 64)
        #expect(try await Self.scan(["--window-ms", "200"]).status == 64)
        #expect(try await Self.scan(["--replay", Self.capture, "--record", "/tmp/x"]).status == 64)
        let run = try await Self.scan(["--extended", "maybe"])
        #expect(run.stderr.contains("--extended takes auto, on or off"))
    }

    @Test func missingReplayFile() async throws {
        let run = try await Self.scan(["--replay", "/nonexistent/capture.log"])
        #expect(run.status == 66)
        #expect(run.stderr.contains("/nonexistent/capture.log"))
    }

    /// On this machine's kernel an adapter nobody has fails at start with the kernel's reason: no Bluetooth in
    /// the kernel, or no such adapter. Either way exit 69 and a message naming the adapter or the module.
    @Test func absentAdapterIsUnavailable() async throws {
        let run = try await Self.scan(["--adapter", "hci4000", "--seconds", "1"])
        #expect(run.status == 69)
        #expect(run.stderr.contains("no Bluetooth support") || run.stderr.contains("hci4000 not found"))
        #expect(run.stdout.isEmpty)
    }
}
