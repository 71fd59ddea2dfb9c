import BeaconModel
import BeaconRooms
import BeaconTracking
import Foundation
import TestSupport
import Testing

/// A taught record flagged when its gateway moves (issue 43; docs/teach.md, "When a gateway moves"), end to end:
/// the built binary replays captures of a tag and of its peers' identity beacons (self-calibration) to a real
/// mosquitto, with a real SQLite state database. A teach stores what the gateway hears of its peers (the
/// anchors); when every peer is then heard 8 dB louder for longer than the hold, the record is marked moved,
/// stored, republished retained and shown by `regions status`; a gateway whose peers change by only 4 dB (a
/// person in the way, not a move) is not flagged; a teach again on the moved gateway clears the mark.
@Suite(.serialized) struct TaughtMoveDaemonTests {
    typealias Teach = RegionTeachGatewaysTests
    static let start: Double = 1_700_000_000
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let tag = "ibeacon:\(uuid):7:9"
    /// Capture seconds at which the peers' levels change (the gateway "moves"), and the capture's end.
    static let change = 200.0
    static let end = 700.0

    /// The tag at -60 twice a second, and the two peers' identity beacons once a second each at `before`
    /// until `change`, then each `shift` dB louder, with ±1 dB of alternating noise; from `from` to `to`.
    static func capture(
        receiver: String, before: [String: Int], shift: Int, from: Double, to: Double
    ) -> [Observation] {
        let settings = CalibrationSettings()
        var observations: [Observation] = []
        for (step, offset) in stride(from: 0.0, to: to - from, by: 0.5).enumerated() {
            let t = from + offset
            observations.append(
                Observation(
                    timestamp: start + t, beaconID: "", format: "ibeacon", identifiers: [uuid, "7", "9"],
                    address: BluetoothAddress(rawValue: 0xC0_0000_0709), rssi: -60 + step % 3 - 1,
                    measuredPower: -59))
            guard step % 2 == 0 else { continue }
            for (index, peer) in before.keys.sorted().enumerated() {
                let level = (before[peer] ?? -90) + (t >= change ? shift : 0) + (step / 2 % 2 == 0 ? 1 : -1)
                let (major, minor) = CalibrationSettings.identity(of: peer)
                observations.append(
                    Observation(
                        timestamp: start + t + 0.1 * Double(index + 1), beaconID: "", format: "ibeacon",
                        identifiers: [settings.uuid, String(major), String(minor)],
                        address: BluetoothAddress(rawValue: 0xB0_0000_0000 | UInt64(index + 1)), rssi: level,
                        measuredPower: -59))
            }
        }
        return observations
    }

    /// The teach test's gateway (desk, its tag) with rooms and self-calibration over a 60 s window.
    static func config(_ id: String, directory: String, port: Int) -> String {
        Teach.config(id, directory: directory, port: port) + """
            rooms:
              enabled: true
              gateways: {gw-a: a, gw-b: b, gw-c: c}
              calibration: {window_s: 60, solve_interval_s: 10}

            """
    }

    /// Replays `observations` as gateway `id` at full speed with a teach of the tag at desk's boundary over capture
    /// seconds `teach`; returns the finished run.
    static func replay(
        _ id: String, _ observations: [Observation], teach: String, directory: String, port: Int
    ) async throws -> BuiltBinary.Result {
        let capture = directory + "/\(id)-\(Int(observations.first?.timestamp ?? 0)).btsnoop"
        try Data(SyntheticCapture(observations.sorted { $0.timestamp < $1.timestamp }).bytes).write(
            to: URL(fileURLWithPath: capture))
        let path = directory + "/\(id).yaml"
        try config(id, directory: directory, port: port).write(toFile: path, atomically: true, encoding: .utf8)
        return try await BuiltBinary.run([
            "replay", capture, "--config", path, "--speed", "0", "--state-db", directory + "/\(id).sqlite",
            "--teach", "desk:\(tag):boundary:\(teach)",
        ])
    }

    @Test func aMovedGatewaysRecordIsFlaggedKeptAndClearedByATeach() async throws {
        let site = try await BrokerSite(prefix: "bb-moved", patterns: ["beaconbridge/regions/taught/#"])
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)

        // gw-a moves: both peers 8 dB louder from t = 200 s. gw-b: both peers 4 dB louder (not a move).
        let moved = try await Self.replay(
            "gw-a",
            Self.capture(receiver: "gw-a", before: ["gw-b": -70, "gw-c": -76], shift: 8, from: 0, to: Self.end),
            teach: "60-90", directory: directory, port: broker.port)
        #expect(moved.status == 0, "\(moved.stderr)")
        let still = try await Self.replay(
            "gw-b",
            Self.capture(receiver: "gw-b", before: ["gw-a": -70, "gw-c": -72], shift: 4, from: 0, to: Self.end),
            teach: "60-90", directory: directory, port: broker.port)
        #expect(still.status == 0, "\(still.stderr)")
        #expect(Teach.logged(moved.stderr, "teach stored", "level=-60"), "\(moved.stderr)")
        #expect(Teach.logged(still.stderr, "teach stored", "level=-60"), "\(still.stderr)")
        #expect(
            Teach.logged(
                moved.stderr, "this gateway moved since it was taught; teach again", "shift_db=8.0", "peers=2"),
            "\(moved.stderr)")
        #expect(!still.stderr.contains("this gateway moved"), "\(still.stderr)")

        // Retained: gw-a's record carries its anchors (the peers as heard at the teach) and the move; gw-b's
        // only its anchors.
        let topicA = "beaconbridge/regions/taught/gw-a/desk/\(Self.tag)"
        let topicB = "beaconbridge/regions/taught/gw-b/desk/\(Self.tag)"
        try await waitUntil("both records are retained", timeout: 10) {
            subscriber.messages.contains { $0.topic == topicA && $0.json?["moved"] != nil }
                && subscriber.messages.contains { $0.topic == topicB }
        }
        let recordA = try #require(subscriber.messages.last { $0.topic == topicA }?.json)
        print("gw-a's record: \(recordA.serialized)")
        #expect(Teach.number(recordA["anchors"]?["gw-b"]).map { abs($0 + 70) <= 1 } == true, "\(recordA.serialized)")
        #expect(Teach.number(recordA["anchors"]?["gw-c"]).map { abs($0 + 76) <= 1 } == true, "\(recordA.serialized)")
        #expect(Teach.number(recordA["moved"]?["shift_db"]).map { abs($0 - 8) <= 1 } == true)
        #expect(Teach.number(recordA["moved"]?["peers"]) == 2)
        // First seen off its anchors once the 60 s window holds the new levels (a check every 30 s), and marked
        // 300 s after that, before the capture ended.
        let since = try #require(Teach.number(recordA["moved"]?["since"]))
        #expect(
            since >= Self.start + Self.change && since <= Self.start + Self.change + 120, "since \(since - Self.start)")
        #expect(since + 300 <= Self.start + Self.end)
        let recordB = try #require(subscriber.messages.last { $0.topic == topicB }?.json)
        #expect(recordB["moved"] == nil, "\(recordB.serialized)")
        #expect(recordB["anchors"]?["gw-a"] != nil, "\(recordB.serialized)")

        // `regions status` shows the note for gw-a only.
        let status = try await BuiltBinary.run([
            "regions", "status", "--config", directory + "/gw-b.yaml", "--wait", "5",
        ])
        print("regions status:\n\(status.stdout)")
        let rows = status.stdout.split(separator: "\n").filter { $0.hasPrefix("desk ") }
        #expect(
            rows.first { $0.contains("gw-a") }?.contains("MOVED: teach again (peers 8 dB off)") == true,
            "\(status.stdout)\(status.stderr)")
        #expect(rows.first { $0.contains("gw-b") }?.contains("MOVED") == false, "\(status.stdout)")

        // gw-a again, later in capture time: its state database still holds the mark; a teach on gw-a starts
        // the record afresh and clears it (published retained without `moved`).
        let later = Self.end + 100
        let again = try await Self.replay(
            "gw-a",
            Self.capture(receiver: "gw-a", before: ["gw-b": -62, "gw-c": -68], shift: 0, from: later, to: later + 90),
            teach: "30-60", directory: directory, port: broker.port)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Teach.logged(again.stderr, "taught levels applied", "reason=stored"), "\(again.stderr)")
        #expect(Teach.logged(again.stderr, "teach stored", "level=-60"), "\(again.stderr)")
        try await waitUntil("the new record is retained", timeout: 10) {
            (subscriber.messages.last { $0.topic == topicA }?.json).map { $0["moved"] == nil } == true
        }
        let cleared = try #require(subscriber.messages.last { $0.topic == topicA }?.json)
        #expect(Teach.number(cleared["anchors"]?["gw-b"]).map { abs($0 + 62) <= 1 } == true, "\(cleared.serialized)")
        #expect(Teach.number(cleared["recorded"]).map { $0 > Self.start + Self.end } == true, "\(cleared.serialized)")
    }
}
