import BeaconModel
import BeaconRooms
import Foundation
import TestSupport
import Testing

/// Training end to end (issue 29; docs/rooms.md, "Training, step by step"): three real gateway processes (the
/// built binary) replay their captures of one tag resting in room a (levels −55 / −70 / −80 dBm at gw-a / gw-b /
/// gw-c, ±1 dB) to one real mosquitto. `beaconbridge rooms train` sends the MQTT command to the leader; the
/// room's fingerprint must appear retained with those levels and be read by every gateway; after the leader is
/// killed the new leader still has it (a second walk pools with it); `rooms forget` clears it everywhere.
/// Deciding rooms with the fingerprints is the classifier's (roomclf): its assertion comes with that merge.
@Suite(.serialized) struct RoomsTrainingGatewaysTests {
    static let gateways = ["gw-a": "a", "gw-b": "b", "gw-c": "c"]
    static let levels: [String: Int] = ["gw-a": -55, "gw-b": -70, "gw-c": -80]
    static let start: Double = 1_700_000_000
    static let seconds = 600
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let tag = "ibeacon:\(uuid):7:9"

    /// What `receiver` hears of the tag: once a second, its level ±1 dB alternating.
    static func observations(receiver: String) -> [Observation] {
        (0..<seconds).map { second in
            Observation(
                timestamp: start + Double(second) + 0.2, beaconID: "", format: "ibeacon",
                identifiers: [uuid, "7", "9"], address: BluetoothAddress(rawValue: 0xC0_0000_0007),
                rssi: (levels[receiver] ?? -90) + (second % 2 == 0 ? 1 : -1), measuredPower: -59)
        }
    }

    @Test func aRoomTrainedThroughTheCommandIsSharedAndSurvivesTheLeader() async throws {
        let site = try await BrokerSite(prefix: "bb-train")
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)

        try RoomsSite.writeCaptures(gateways: Self.gateways.keys, directory: directory) {
            Self.observations(receiver: $0)
        }
        let processes = try RoomsSite.replay(
            gateways: Self.gateways, directory: directory, port: broker.port, speed: 4,
            rooms: ["replay_wait_for_gateways: 3", "calibration: {enabled: false}"])
        defer { for process in processes.values { process.signal(SIGKILL) } }
        let roomTopic = "beaconbridge/rooms/" + Self.tag
        try await waitUntil("the leader places the tag", timeout: 60) {
            subscriber.messages.contains { $0.topic == roomTopic }
        }

        // Bad commands are answered, naming the field, and nobody crashes.
        subscriber.publish(
            topic: "beaconbridge/gw-b/command/rooms/train", payload: #"{"id":"x1","room":"attic","device":"t"}"#)
        subscriber.publish(topic: "beaconbridge/gw-b/command/rooms/train", payload: "not json")
        subscriber.publish(
            topic: "beaconbridge/gw-b/command/rooms/train",
            payload: #"{"id":"x3","room":"a","device":"t","seconds":9999}"#)
        try await waitUntil("three refusals", timeout: 20) {
            subscriber.messages.filter { $0.topic == "beaconbridge/gw-b/reply/rooms/train" }.count >= 3
        }
        let refusals = subscriber.messages.filter { $0.topic == "beaconbridge/gw-b/reply/rooms/train" }.compactMap(
            \.json)
        #expect(refusals.map { $0["error"]?["step"] } == [.string("room"), .string("payload"), .string("seconds")])
        #expect(refusals.first?["error"]?["kind"] == .string("unknown_room"))

        // Training through the CLI: the command goes to the leader (gw-a), the walk is 40 s of capture.
        let train = try await BuiltBinary.run([
            "rooms", "train", "--room", "a", "--device", Self.tag, "--seconds", "40", "--config",
            directory + "/gw-c.yaml",
        ])
        #expect(train.status == 0, "stdout: \(train.stdout) stderr: \(train.stderr)")
        print("rooms train:\n\(train.stdout)")
        #expect(train.stdout.contains("gw-a: training a with \(Self.tag)"))
        #expect(train.stdout.contains("from 3 gateway(s)"))
        #expect(train.stdout.contains("1 walk(s), 40.0 s, quality 0.667"), "\(train.stdout)")

        // The fingerprint, retained, with every gateway's level.
        let fingerprintTopic = "beaconbridge/rooms/fingerprint/a"
        try await waitUntil("the fingerprint is published", timeout: 10) {
            subscriber.messages.contains { $0.topic == fingerprintTopic }
        }
        let published = try #require(subscriber.messages.last { $0.topic == fingerprintTopic })
        let fingerprint = try #require(
            FingerprintBook.fingerprint(payload: Array(published.payload.utf8), site: Set(Self.gateways.keys)))
        #expect(published.json?["gateway"] == .string("gw-a"))
        #expect(fingerprint.walks == 1 && fingerprint.seconds == 40)
        for (id, level) in Self.levels {
            let row = try #require(fingerprint.levels[id], "\(published.payload)")
            #expect(abs(row.mean - Double(level)) < 0.2, "\(id): \(row)")
            #expect(abs(row.spread - 1) < 0.1, "\(id): \(row)")
            #expect(row.samples >= 38 && row.samples <= 41, "\(id): \(row)")
            #expect(row.heardShare > 0.9, "\(id): \(row)")
        }
        // Every gateway has it in its arbiter: the one that trained, and the others from the retained message.
        #expect(processes["gw-a"]?.stderr.contains("fingerprint published") == true)
        for id in ["gw-b", "gw-c"] {
            try await waitUntil("\(id) has the fingerprint", timeout: 10) {
                processes[id]?.stderr.contains(#"msg="fingerprints read" rooms="a(walks 1, 40.0 s"#) == true
            }
        }
        let status = try await BuiltBinary.run(["rooms", "status", "--config", directory + "/gw-b.yaml", "--wait", "5"])
        #expect(status.status == 0, "stderr: \(status.stderr)")
        print("rooms status:\n\(status.stdout)")
        let row = status.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("a ") }
        let fields = row?.split(separator: " ").map(String.init) ?? []
        #expect(Array(fields.prefix(5)) == ["a", "1", "40.0", "gw-a,gw-b,gw-c", "0.67"], "\(status.stdout)")
        #expect(fields.last == "gw-a")

        // The leader killed: gw-b leads and still has the fingerprint: a second walk pools with it.
        processes["gw-a"]?.signal(SIGKILL)
        try await waitUntil("gw-b leads", timeout: 20) {
            processes["gw-b"]?.stderr.contains("leading the room decisions") == true
        }
        let again = try await BuiltBinary.run([
            "rooms", "train", "--room", "a", "--device", Self.tag, "--seconds", "20", "--config",
            directory + "/gw-c.yaml",
        ])
        #expect(again.status == 0, "stdout: \(again.stdout) stderr: \(again.stderr)")
        print("rooms train after the takeover:\n\(again.stdout)")
        #expect(again.stdout.contains("gw-b: done"), "\(again.stdout)")
        #expect(again.stdout.contains("2 walk(s), 60.0 s, quality 1.0"), "\(again.stdout)")
        try await waitUntil("gw-b's pooled fingerprint", timeout: 10) {
            subscriber.messages.last { $0.topic == fingerprintTopic }?.json?["gateway"] == .string("gw-b")
        }
        let pooled = try #require(subscriber.messages.last { $0.topic == fingerprintTopic }?.json)
        #expect(pooled["walks"] == .int(2))

        // Forgotten: the retained message cleared, every running gateway drops it.
        let forget = try await BuiltBinary.run(["rooms", "forget", "--room", "a", "--config", directory + "/gw-c.yaml"])
        #expect(forget.status == 0, "stdout: \(forget.stdout) stderr: \(forget.stderr)")
        #expect(forget.stdout.contains("gw-b: a forgotten"), "\(forget.stdout)")
        try await waitUntil("the retained fingerprint is cleared", timeout: 10) {
            subscriber.messages.last { $0.topic == fingerprintTopic }?.payload == ""
        }
        for id in ["gw-b", "gw-c"] {
            try await waitUntil("\(id) forgot", timeout: 10) {
                processes[id]?.stderr.contains(#"msg="fingerprints read" rooms=none"#) == true
            }
        }
        let after = try await BuiltBinary.run(["rooms", "status", "--config", directory + "/gw-b.yaml", "--wait", "5"])
        #expect(after.stdout.contains("fingerprints: none"), "\(after.stdout)")

        // Refused by the gateway: 65; no broker: 69.
        let unknown = try await BuiltBinary.run([
            "rooms", "train", "--room", "attic", "--device", Self.tag, "--config", directory + "/gw-c.yaml",
        ])
        #expect(unknown.status == 65, "stdout: \(unknown.stdout) stderr: \(unknown.stderr)")
        #expect(unknown.stderr.contains("unknown_room"))
        broker.stop()
        let unreachable = try await BuiltBinary.run([
            "rooms", "train", "--room", "a", "--device", Self.tag, "--config", directory + "/gw-c.yaml",
        ])
        #expect(unreachable.status == 69, "stdout: \(unreachable.stdout) stderr: \(unreachable.stderr)")
        #expect(unreachable.stderr.contains("rooms train: cannot reach the broker"), "\(unreachable.stderr)")
    }
}
