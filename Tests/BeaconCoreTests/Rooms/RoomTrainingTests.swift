import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import BeaconRooms

/// Training inside the coordinator (issue 29; docs/rooms.md, "Training, step by step"): the rooms commands read
/// field by field, a walk recording every gateway's calibrated levels of the device, pooled and published at
/// its end, the retained fingerprints read back by every gateway, and forgetting.
@Suite struct RoomTrainingTests {
    static let t0 = RoomCoordinatorTests.t0
    static let topics = RoomCoordinatorTests.topics
    static let rooms: Set = ["a", "b", "c"]

    static func coordinator(_ id: String, offsets: [String: Double] = [:]) -> RoomCoordinator {
        var settings = RoomCoordinatorTests.settings
        settings.receiverOffsets = offsets
        return RoomCoordinator(gatewayID: id, topics: topics, settings: settings, leaderSettle: 2)
    }

    static func command(_ verb: String, _ json: String) -> Result<RoomCommand, RoomCommand.Failure> {
        RoomCommand.parse(verb: verb, payload: Array(json.utf8), rooms: rooms)
    }

    static func replies(_ effects: [RoomCoordinator.Effect]) -> [(verb: String, json: JSONValue)] {
        effects.compactMap { effect in
            guard case let .reply(verb, payload) = effect, let json = try? JSONValue(parsing: payload, maxDepth: 8)
            else { return nil }
            return (verb, json)
        }
    }

    static func fingerprints(_ effects: [RoomCoordinator.Effect]) -> [(room: String, payload: String)] {
        effects.compactMap { effect in
            if case let .fingerprint(room, payload) = effect { (room, payload) } else { nil }
        }
    }

    /// `seconds` of the device heard once a second by gw-b (its own engine) at -60, and by gw-a and gw-c (the
    /// broker) at -75 and -85 dBm, with ±1 dB alternating; another beacon beside it.
    static func walk(_ coordinator: inout RoomCoordinator, from start: Timestamp, seconds: Int, device: String = "tag")
        throws -> [RoomCoordinator.Effect]
    {
        var effects: [RoomCoordinator.Effect] = []
        for second in 0..<seconds {
            let time = start + Double(second) + 0.5
            let wiggle = second % 2 == 0 ? 1 : -1
            effects += coordinator.ownSighting(
                RoomSighting(
                    gatewayID: "gw-b", beaconID: device, time: time, rssi: Double(-60 + wiggle),
                    rawRSSI: Double(-60 + wiggle)))
            effects += coordinator.receive(
                try RoomCoordinatorTests.sighting("gw-a", rssi: -75 + wiggle, at: time, beacon: device), wall: 0)
            effects += coordinator.receive(
                try RoomCoordinatorTests.sighting("gw-c", rssi: -85 + wiggle, at: time, beacon: device), wall: 0)
            effects += coordinator.receive(
                try RoomCoordinatorTests.sighting("gw-a", rssi: -40, at: time, beacon: "other"), wall: 0)
            effects += coordinator.advance(to: time, wall: 0)
        }
        return effects
    }

    @Test func commandsAreReadFieldByField() {
        #expect(
            Self.command("train", #"{"id":"q1","room":"a","device":"tag"}"#)
                == .success(.train(id: "q1", room: "a", device: "tag", seconds: 60)))
        #expect(
            Self.command("train", #"{"room":"c","device":"ibeacon:x:1:2","seconds":600}"#)
                == .success(.train(id: nil, room: "c", device: "ibeacon:x:1:2", seconds: 600)))
        #expect(Self.command("forget", #"{"id":"f","room":"b"}"#) == .success(.forget(id: "f", room: "b")))
        #expect(RoomCommand.verb(inTopic: "bb/gw/command/rooms/train", commandBase: "bb/gw/command/rooms") == "train")
        #expect(RoomCommand.verb(inTopic: "bb/gw/command/rooms/a/b", commandBase: "bb/gw/command/rooms") == nil)
        #expect(RoomCommand.verb(inTopic: "bb/gw/command/gatt/read", commandBase: "bb/gw/command/rooms") == nil)
        #expect(
            TopicLayout(settings: TopicSettings(), gatewayID: "gw-a").roomsReply("train")
                == "beaconbridge/gw-a/reply/rooms/train")

        // (verb, payload, kind, step, id kept)
        let hostile: [(String, String, String, String, String?)] = [
            ("train", "not json", "bad_request", "payload", nil),
            ("train", "[1,2]", "bad_request", "payload", nil),
            ("train", String(repeating: " ", count: 5000), "bad_request", "payload", nil),
            ("train", #"{"id":"q","device":"tag"}"#, "bad_request", "room", "q"),
            ("train", #"{"id":"q","room":7,"device":"tag"}"#, "bad_request", "room", "q"),
            ("train", #"{"id":"q","room":"attic","device":"tag"}"#, "unknown_room", "room", "q"),
            ("train", #"{"id":"q","room":"a"}"#, "bad_request", "device", "q"),
            ("train", #"{"id":"q","room":"a","device":""}"#, "bad_request", "device", "q"),
            ("train", "{\"id\":\"q\",\"room\":\"a\",\"device\":\"t\\u0001g\"}", "bad_request", "device", "q"),
            ("train", #"{"id":"q","room":"a","device":"tag","seconds":0}"#, "bad_request", "seconds", "q"),
            ("train", #"{"id":"q","room":"a","device":"tag","seconds":601}"#, "bad_request", "seconds", "q"),
            ("train", #"{"id":"q","room":"a","device":"tag","seconds":"60"}"#, "bad_request", "seconds", "q"),
            ("train", #"{"id":"q","room":"a","device":"tag","seconds":1e400}"#, "bad_request", "seconds", "q"),
            ("train", #"{"id":"q","room":"a","device":"tag","roomz":1}"#, "bad_request", "roomz", "q"),
            (
                "train", #"{"id":"\#(String(repeating: "x", count: 129))","room":"a","device":"tag"}"#, "bad_request",
                "id", nil
            ),
            ("train", #"{"id":5,"room":"a","device":"tag"}"#, "bad_request", "id", nil),
            ("forget", #"{"id":"q"}"#, "bad_request", "room", "q"),
            ("forget", #"{"id":"q","room":"a","device":"tag"}"#, "bad_request", "device", "q"),
            ("forget", #"{"id":"q","room":"../a"}"#, "unknown_room", "room", "q"),
            ("rename", #"{"id":"q","room":"a"}"#, "unknown_operation", "topic", nil),
        ]
        for (verb, payload, kind, step, id) in hostile {
            guard case let .failure(failure) = Self.command(verb, payload) else {
                Issue.record("accepted: \(verb) \(payload.prefix(80))")
                continue
            }
            #expect(failure.kind == kind, "\(payload.prefix(80))")
            #expect(failure.step == step, "\(payload.prefix(80)): \(failure.message)")
            #expect(failure.id == id, "\(payload.prefix(80))")
            #expect(!failure.message.isEmpty)
        }
    }

    @Test func randomAndMutatedCommandsNeverTrap() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let seeds = Array(#"{"id":"q1","room":"a","device":"tag","seconds":60}"#.utf8)
        var accepted = 0
        for round in 0..<5000 {
            var bytes = seeds
            if round % 2 == 0 {
                for _ in 0..<(1 + Int(next() % 4)) {
                    bytes[Int(next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: next())
                }
            } else {
                bytes = (0..<Int(next() % 80)).map { _ in UInt8(truncatingIfNeeded: next()) }
            }
            if case .success = RoomCommand.parse(
                verb: round % 3 == 0 ? "forget" : "train", payload: bytes, rooms: Self.rooms)
            {
                accepted += 1
            }
        }
        #expect(accepted < 5000)
    }

    @Test func aWalkRecordsEveryGatewaysCalibratedLevelsAndIsPublishedAtItsEnd() throws {
        // gw-a reads 5 dB loud: its receive offset takes that off.
        var b = Self.coordinator("gw-b", offsets: ["gw-a": 5])
        _ = b.advance(to: Self.t0, wall: 0)
        let start = b.command(
            verb: "train", payload: Array(#"{"id":"w1","room":"b","device":"tag","seconds":20}"#.utf8), now: Self.t0)
        let started = try #require(Self.replies(start).first)
        #expect(started.verb == "train")
        #expect(started.json["state"] == .string("started"))
        #expect(started.json["end"]?.roomNumber == Self.t0 + 20)
        #expect(b.trainingWalk?.deviceID == "tag")

        // A second training meanwhile is refused `busy`.
        let second = b.command(
            verb: "train", payload: Array(#"{"id":"w2","room":"a","device":"tag"}"#.utf8), now: Self.t0)
        #expect(Self.replies(second).first?.json["error"]?["kind"] == .string("busy"))
        #expect(Self.replies(second).first?.json["id"] == .string("w2"))

        var effects = try Self.walk(&b, from: Self.t0, seconds: 21)
        #expect(Self.fingerprints(effects).isEmpty, "not before the end and its grace")
        effects += b.advance(to: Self.t0 + 22.5, wall: 0)
        let published = try #require(Self.fingerprints(effects).first)
        #expect(published.room == "b")
        let done = try #require(Self.replies(effects).first)
        #expect(done.json["state"] == .string("done"))
        #expect(done.json["gateways_heard"] == .int(3))
        #expect(done.json["reports"] == .int(60), "20 s of 3 gateways: the report at 20.5 s is after the end")
        #expect(done.json["walks"] == .int(1))
        #expect(done.json["quality"]?.roomNumber == 0.333)

        let fingerprint = try #require(b.arbiter.fingerprints["b"])
        #expect(fingerprint.walks == 1 && fingerprint.seconds == 20)
        #expect(abs((fingerprint.levels["gw-b"]?.mean ?? 0) + 60) < 0.01)
        #expect(abs((fingerprint.levels["gw-a"]?.mean ?? 0) + 80) < 0.01, "-75 read, less the +5 dB offset")
        #expect(abs((fingerprint.levels["gw-c"]?.mean ?? 0) + 85) < 0.01)
        #expect(abs((fingerprint.levels["gw-c"]?.spread ?? 0) - 1) < 0.01)
        #expect(fingerprint.levels["gw-a"]?.heardShare == 1)
        #expect(fingerprint.levels["gw-a"]?.samples == 20)
        // What is published reads back as the same fingerprint (rounded).
        let read = try #require(
            FingerprintBook.fingerprint(payload: Array(published.payload.utf8), site: ["gw-a", "gw-b", "gw-c"]))
        #expect(read.walks == 1 && read.levels.count == 3 && read.room == "b")
        #expect(b.trainingWalk == nil)

        // A second walk of the same room pools with the first.
        _ = b.command(
            verb: "train", payload: Array(#"{"room":"b","device":"tag","seconds":40}"#.utf8), now: Self.t0 + 30)
        effects = try Self.walk(&b, from: Self.t0 + 30, seconds: 45)
        let pooled = try #require(b.arbiter.fingerprints["b"])
        #expect(pooled.walks == 2 && pooled.seconds == 60)
        #expect(Self.replies(effects).first?.json["quality"]?.roomNumber == 1)
        #expect(b.counters.trainings == 2)
    }

    @Test func aWalkNobodyHeardSaysSoAndAClockIsNeeded() throws {
        var fresh = Self.coordinator("gw-b")
        let early = fresh.command(verb: "train", payload: Array(#"{"room":"b","device":"tag"}"#.utf8), now: 0)
        #expect(Self.replies(early).first?.json["error"]?["kind"] == .string("not_ready"))

        var b = Self.coordinator("gw-b")
        _ = b.command(verb: "train", payload: Array(#"{"room":"b","device":"phone","seconds":5}"#.utf8), now: Self.t0)
        let effects = try Self.walk(&b, from: Self.t0, seconds: 8, device: "tag")
        let reply = try #require(Self.replies(effects).first)
        #expect(reply.json["ok"] == .bool(false))
        #expect(reply.json["error"]?["kind"] == .string("not_heard"))
        #expect(Self.fingerprints(effects).isEmpty)
        #expect(b.arbiter.fingerprints.isEmpty)
    }

    @Test func retainedFingerprintsAreReadByEveryGatewayAndForgetting() throws {
        var b = Self.coordinator("gw-b")
        _ = b.command(verb: "train", payload: Array(#"{"room":"b","device":"tag","seconds":10}"#.utf8), now: Self.t0)
        let effects = try Self.walk(&b, from: Self.t0, seconds: 13)
        let published = try #require(Self.fingerprints(effects).first)

        // Another gateway (a later leader) reads the retained message into its arbiter.
        var c = Self.coordinator("gw-c")
        let topic = Self.topics.fingerprint(room: "b")
        #expect(c.receive(InboundMessage(topic: topic, payload: Array(published.payload.utf8)), wall: 0).isEmpty)
        let read = try #require(c.arbiter.fingerprints["b"])
        #expect(read.walks == 1 && read.levels.keys.sorted() == ["gw-a", "gw-b", "gw-c"])
        #expect(c.counters.fingerprintsRead == 1)

        // Refused: another room than its topic, a room outside the site, garbage.
        let payload = published.payload
        let bad: [InboundMessage] = [
            InboundMessage(topic: Self.topics.fingerprint(room: "a"), payload: Array(payload.utf8)),
            InboundMessage(
                topic: Self.topics.fingerprint(room: "attic"),
                payload: Array(payload.replacing(#""room":"b""#, with: #""room":"attic""#).utf8)),
            InboundMessage(topic: topic, payload: Array("{".utf8)),
            InboundMessage(topic: topic, payload: Array(repeating: 0xFF, count: 70_000)),
        ]
        for message in bad { _ = c.receive(message, wall: 0) }
        #expect(c.counters.malformed == bad.count)
        #expect(c.arbiter.fingerprints.rooms.keys.sorted() == ["b"])

        // An empty retained message: forgotten.
        _ = c.receive(InboundMessage(topic: topic, payload: []), wall: 0)
        #expect(c.arbiter.fingerprints.isEmpty)

        // The forget command: removed here, the empty retained message published, a reply.
        let forget = b.command(verb: "forget", payload: Array(#"{"id":"f","room":"b"}"#.utf8), now: Self.t0 + 20)
        #expect(b.arbiter.fingerprints.isEmpty)
        #expect(Self.fingerprints(forget).first?.room == "b" && Self.fingerprints(forget).first?.payload == "")
        #expect(Self.replies(forget).first?.json["forgotten"] == .bool(true))
        let again = b.command(verb: "forget", payload: Array(#"{"room":"b"}"#.utf8), now: Self.t0 + 20)
        #expect(Self.replies(again).first?.json["forgotten"] == .bool(false))
    }
}
