import Foundation
import TestSupport
import Testing

/// `scripts/demo.sh` (what `make demo` runs after the release build), run with the debug binary at a high
/// speed: its own broker, the bundled story, events shown as they arrive, everything stopped at the end.
@Suite struct DemoScriptTests {
    @Test func demoReplaysTheStoryAndShowsRegionEvents() async throws {
        let directory = try TestDirectory.make(prefix: "bb-demo-test")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [BuiltBinary.packageRoot + "/scripts/demo.sh"]
        var environment = ProcessInfo.processInfo.environment
        environment["BEACONBRIDGE"] = BuiltBinary.path
        environment["DEMO_SPEED"] = "60"
        environment["TMPDIR"] = directory
        process.environment = environment
        _ = FileManager.default.createFile(atPath: directory + "/out", contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: directory + "/out")
        process.standardError = process.standardOutput
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        let output = (try? String(contentsOfFile: directory + "/out", encoding: .utf8)) ?? ""
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "output:\n\(output)")

        let lines = output.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        // The story's transitions, shown with the configured names.
        #expect(lines.contains { $0.hasSuffix("gateway demo is online") })
        #expect(lines.contains { $0.contains("region enter desk Keys") })
        #expect(lines.contains { $0.contains("region enter office Badge") })
        #expect(lines.contains { $0.contains("region exit office Badge") })
        #expect(lines.contains { $0.contains("region enter shelf Toolbox") })
        #expect(lines.contains { $0.contains("presence away Badge") })
        #expect(lines.contains { $0.hasSuffix("gateway demo is offline") })
        #expect(lines.contains { $0.hasPrefix("discovery config ") })
        #expect(lines.contains { $0.hasPrefix("demo: the gateway ran") && $0.hasSuffix("exited with 0") })
        // The script removed its temp dir (TMPDIR) and left no broker behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix("beaconbridge-demo.")
        }
        #expect(leftovers.isEmpty)
    }
}
