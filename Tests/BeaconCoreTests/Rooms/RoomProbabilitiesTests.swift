import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// The leader's room probabilities snapshot (docs/mqtt.md, "Room probabilities").
@Suite struct RoomProbabilitiesTests {
    @Test func thePayloadAndWhatCountsAsAChange() throws {
        let snapshot = RoomProbabilities(
            beaconID: "tag", time: 1_700_000_000.5, room: "b",
            probabilities: ["b": 0.91234, "a": 0.08766], deviceOffset: -3.456)
        #expect(
            snapshot.payload
                == #"{"kind":"room_probabilities","beacon_id":"tag","time":1700000000.5,"room":"b","probabilities":{"a":0.088,"b":0.912},"device_offset_db":-3.46}"#
        )
        #expect(RoomTopics(prefix: "bb").probabilities(beaconID: "tag") == "bb/rooms/tag/probabilities")
        var next = snapshot
        next.probabilities = ["a": 0.12, "b": 0.88]
        #expect(!next.differs(from: snapshot))
        next.probabilities = ["a": 0.2, "b": 0.8]
        #expect(next.differs(from: snapshot))
        next = snapshot
        next.room = "a"
        #expect(next.differs(from: snapshot))
        let undecided = RoomProbabilities(beaconID: "x", time: 0, room: nil, probabilities: [:], deviceOffset: nil)
        #expect(undecided.payload.contains(#""room":null"#) && undecided.payload.contains(#""device_offset_db":null"#))
        #expect(undecided.mostLikely == nil)
    }
}

/// The leader publishes the classifier's probabilities once every room is trained (retained fingerprints read
/// from the broker) and the classifier is on; at most every 5 s of capture time per beacon, only when they moved.
@Suite struct RoomProbabilitiesCoordinatorTests {
    static let t0 = RoomCoordinatorTests.t0

    static func fingerprintMessage(_ room: String, levels: [String: Double]) -> InboundMessage {
        let print = RoomFingerprint(
            room: room,
            levels: levels.mapValues { .init(mean: $0, spread: 3, samples: 60, heardShare: 1) }, seconds: 60,
            walks: 1, recorded: t0)
        return InboundMessage(
            topic: RoomCoordinatorTests.topics.fingerprint(room: room),
            payload: Array(FingerprintBook.payload(print, gateway: "gw-a").utf8))
    }

    static func published(_ effects: [RoomCoordinator.Effect]) -> [RoomProbabilities] {
        effects.flatMap { effect -> [RoomProbabilities] in
            if case let .probabilities(list) = effect { list } else { [] }
        }
    }

    @Test func theLeaderPublishesProbabilitiesWhileTheClassifierDecides() throws {
        var settings = RoomCoordinatorTests.settings
        settings.classifier.enabled = true
        // gw-a leads (lowest id); its own sightings come from its engine.
        var coordinator = RoomCoordinator(
            gatewayID: "gw-a", topics: RoomCoordinatorTests.topics, settings: settings, leaderSettle: 2)
        _ = RoomCoordinatorTests.online(&coordinator, ["gw-a", "gw-b", "gw-c"])
        #expect(coordinator.isLeader)
        func sight(_ second: Double) -> [RoomCoordinator.Effect] {
            let time = Self.t0 + second
            var effects = coordinator.ownSighting(
                RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: time, rssi: -50, rawRSSI: -50))
            effects += coordinator.receive(try! RoomCoordinatorTests.sighting("gw-b", rssi: -75, at: time), wall: 10)
            effects += coordinator.receive(try! RoomCoordinatorTests.sighting("gw-c", rssi: -85, at: time), wall: 10)
            return effects + coordinator.advance(to: time, wall: 10)
        }
        // Untrained: the rule decides, nothing is published.
        var effects: [RoomCoordinator.Effect] = []
        for second in 1...5 { effects += sight(Double(second)) }
        #expect(Self.published(effects).isEmpty)
        // Every room trained (the retained fingerprints): probabilities, then not again within 5 s.
        for (room, levels) in [
            ("a", ["gw-a": -50.0, "gw-b": -75, "gw-c": -85]), ("b", ["gw-a": -75, "gw-b": -50, "gw-c": -75]),
            ("c", ["gw-a": -85, "gw-b": -75, "gw-c": -50]),
        ] {
            _ = coordinator.receive(Self.fingerprintMessage(room, levels: levels), wall: 10)
        }
        #expect(coordinator.arbiter.decidesByFingerprints)
        var snapshots: [RoomProbabilities] = []
        for second in 6...30 { snapshots += Self.published(sight(Double(second))) }
        let first = try #require(snapshots.first)
        #expect(first.beaconID == "tag" && first.room == "a")
        #expect(Set(first.probabilities.keys) == ["a", "b", "c"])
        #expect(first.mostLikely == "a" || snapshots.last?.mostLikely == "a")
        for (earlier, later) in zip(snapshots, snapshots.dropFirst()) {
            #expect(later.time - earlier.time >= RoomProbabilities.interval)
        }
        #expect(snapshots.count <= 5)
    }
}
