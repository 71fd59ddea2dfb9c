import BeaconModel
import Foundation
import TestSupport
import Testing

/// `beaconbridge simulate --capture`: the built binary writes a scenario as a btsnoop capture, and the
/// binary's own decoder reads it back.
@Suite struct SimulateCaptureTests {
    static let walkPast = BuiltBinary.packageRoot + "/config/scenarios/walk-past.json"

    /// The `id`s of every beacon in `decode --btsnoop` output, with how often each was seen.
    static func decodedIDs(_ stdout: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in stdout.split(separator: "\n") {
            guard let json = try? JSONValue(parsing: String(line)), case let .array(beacons)? = json["beacons"] else {
                continue
            }
            for beacon in beacons {
                if case let .string(id)? = beacon["id"] { counts[id, default: 0] += 1 }
            }
        }
        return counts
    }

    static func summaryInt(_ stdout: String, _ key: String) -> Int? {
        guard let line = stdout.split(separator: "\n").last, let json = try? JSONValue(parsing: String(line)),
            case let .int(value)? = json["summary"]?[key]
        else { return nil }
        return Int(value)
    }

    @Test func walkPastCaptureDecodesToTheScenarioBeacons() async throws {
        let directory = try TestDirectory.make(prefix: "bb-simcap")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = directory + "/walk-past.btsnoop"
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", Self.walkPast, "--summary-only", "--capture", capture,
        ])
        #expect(simulate.status == 0, "stderr: \(simulate.stderr)")
        let written = try #require(simulate.stderr.split(separator: "\n").first { $0.hasPrefix("capture: ") })
        #expect(!written.contains("skipped"))
        // "capture: PATH: N advertising report events over S s"
        let events = try #require(written.split(separator: " ").dropFirst(2).first.flatMap { Int($0) })
        #expect(events > 1000)

        let decode = try await BuiltBinary.run(["decode", "--btsnoop", capture])
        #expect(decode.status == 0, "stdout tail: \(decode.stdout.suffix(400))")
        #expect(Self.summaryInt(decode.stdout, "reports") == events)
        #expect(Self.summaryInt(decode.stdout, "errors") == 0)
        let ids = Self.decodedIDs(decode.stdout)
        #expect(
            Set(ids.keys) == [
                "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1",
                "eddystone-uid:edd1ebeac04e5defa017:0123456789ab",
            ])
        #expect(ids.values.reduce(0, +) == events)
        // The Eddystone beacon advertises at 3 Hz for 300 s with 20 % loss: about 720 reports.
        let eddystone = ids["eddystone-uid:edd1ebeac04e5defa017:0123456789ab"] ?? 0
        #expect((500...900).contains(eddystone))
    }

    @Test func formatsWithoutASyntheticPayloadAreSkippedAndCounted() async throws {
        let directory = try TestDirectory.make(prefix: "bb-simcap")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenario = directory + "/mixed.json"
        try """
        {"name": "mixed", "duration_s": 20, "beacons": [
          {"format": "altbeacon", "identifiers": ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", 3, 4], "rate_hz": 2, "loss": 0,
           "path": [{"t": 0, "x": 1}]},
          {"format": "eddystone-eid", "identifiers": ["0x1122334455667788"], "rate_hz": 1, "loss": 0,
           "path": [{"t": 0, "x": 1}]}
        ]}
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let capture = directory + "/mixed.btsnoop"
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", scenario, "--summary-only", "--capture", capture,
        ])
        #expect(simulate.status == 0, "stderr: \(simulate.stderr)")
        let written = try #require(simulate.stderr.split(separator: "\n").first { $0.hasPrefix("capture: ") })
        let words = written.split(separator: " ")
        let events = try #require(words.dropFirst(2).first.flatMap { Int($0) })
        let skipped = try #require(words.firstIndex(of: "observations").flatMap { Int(words[$0 - 1]) }, "\(written)")
        // 2 Hz and 1 Hz (±10 % jitter) for 20 s, nothing lost.
        #expect((36...44).contains(events))
        #expect((17...23).contains(skipped))
        let decode = try await BuiltBinary.run(["decode", "--btsnoop", capture])
        #expect(Self.decodedIDs(decode.stdout) == ["altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:3:4": events])
    }

    @Test func aCapturePathThatCannotBeCreatedExits73() async throws {
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", Self.walkPast, "--summary-only",
            "--capture", "/nonexistent-directory/out.btsnoop",
        ])
        #expect(simulate.status == 73)
        #expect(simulate.stderr.contains("/nonexistent-directory/out.btsnoop"))
        #expect(simulate.stderr.contains("open"))
    }
}
