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

/// `scan` under the one service group: a stop signal or the `--seconds` deadline stops the source, the printing
/// ends with it, and the summary is printed with exit 0.
@Suite struct ScanLifecycleTests {
    /// At a tenth of its speed the capture's 12.9 s last about two minutes: it cannot end by itself here.
    static let slow = ["scan", "--replay", BuiltBinary.androidCapture, "--speed", "0.1"]

    @Test(arguments: [SIGTERM, SIGINT])
    func aStopSignalEndsTheScanWithItsSummary(signal: Int32) async throws {
        let scan = try DaemonProcess(arguments: Self.slow)
        try await waitUntil("the first advertising event", timeout: 60) { !scan.stdout.isEmpty }
        scan.signal(signal)
        let status = try #require(await scan.waitForExit(timeout: 60), "scan did not stop; stderr: \(scan.stderr)")
        #expect(status == 0, "stderr: \(scan.stderr)")
        let printed = scan.stdout.split(separator: "\n").count
        #expect(printed >= 1 && printed < 412)
        #expect(scan.stderr.contains("beaconbridge scan: \(printed) advertising events, 0 dropped"), "\(scan.stderr)")
    }

    @Test func theSecondsDeadlineEndsTheScanWithItsSummary() async throws {
        let run = try await BuiltBinary.run(Self.slow + ["--seconds", "1"], timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.lines.count < 412)
        #expect(run.stderr.contains("beaconbridge scan: \(run.lines.count) advertising events"), "\(run.stderr)")
    }
}
