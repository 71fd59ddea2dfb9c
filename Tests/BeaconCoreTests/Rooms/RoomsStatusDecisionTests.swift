import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// `rooms status` says which rule decides (issue 43): the classifier only when it is on and every room of the site
/// has a fingerprint naming one of its gateways, as the arbiter decides (`RoomArbiter.decidesByFingerprints`).
@Suite struct RoomsStatusDecisionTests {
    static let rooms = ["gw-a": "kitchen", "gw-b": "office"]

    static func status(trained: [String: [String]]) -> RoomsStatus {
        let gateway = GatewaySettings(id: "gw-a")
        var settings = RoomSettings()
        settings.gateways = rooms
        let topics = settings.topics(prefix: "beaconbridge", own: gateway)
        var status = RoomsStatus(topics: topics, rooms: rooms)
        for (room, gateways) in trained.sorted(by: { $0.key < $1.key }) {
            let levels = Dictionary(
                uniqueKeysWithValues: gateways.map {
                    ($0, RoomFingerprint.Level(mean: -70, spread: 3, samples: 60, heardShare: 1))
                })
            let fingerprint = RoomFingerprint(room: room, levels: levels, seconds: 60, walks: 1, recorded: 100)
            status.take(
                InboundMessage(
                    topic: topics.fingerprint(room: room),
                    payload: Array(FingerprintBook.payload(fingerprint, gateway: "gw-a").utf8)))
        }
        return status
    }

    /// The arbiter's own answer for the same book, so the line cannot drift from what decides.
    static func arbiterDecidesByFingerprints(_ status: RoomsStatus, withoutGateway: Set<String> = []) -> Bool {
        var settings = RoomArbiterSettings()
        settings.gatewayRooms = rooms
        settings.roomsWithoutGateway = withoutGateway
        settings.classifier.enabled = true
        var arbiter = RoomArbiter(settings: settings)
        arbiter.setFingerprints(FingerprintBook(status.fingerprints.values.map(\.fingerprint)))
        return arbiter.decidesByFingerprints
    }

    @Test func saysWhichRuleDecidesAndWhy() {
        let off = Self.status(trained: ["kitchen": ["gw-a", "gw-b"], "office": ["gw-a", "gw-b"]])
        #expect(off.fingerprints.count == 2)
        #expect(off.decisionLine(gatewayRooms: Self.rooms, classifier: false).contains("level rule"))
        #expect(off.decisionLine(gatewayRooms: Self.rooms, classifier: false).contains("fingerprint_classifier is off"))
        #expect(
            off.decisionLine(gatewayRooms: Self.rooms, classifier: true)
                == "decisions: the fingerprint classifier (every room trained: kitchen, office)")
        #expect(Self.arbiterDecidesByFingerprints(off))
        // The fingerprint margin rule (docs/rooms.md, "Session 29") when the classifier is off; the classifier first.
        #expect(
            off.decisionLine(gatewayRooms: Self.rooms, classifier: false, rule: true)
                == "decisions: the fingerprint margin rule (every room trained: kitchen, office)")
        #expect(
            off.decisionLine(gatewayRooms: Self.rooms, classifier: true, rule: true)
                == "decisions: the fingerprint classifier (every room trained: kitchen, office)")

        let half = Self.status(trained: ["kitchen": ["gw-a", "gw-b"]])
        #expect(
            half.decisionLine(gatewayRooms: Self.rooms, classifier: true)
                == "decisions: the level rule until every room is trained (not yet: office)")
        #expect(!Self.arbiterDecidesByFingerprints(half))

        // A fingerprint heard by none of the site's gateways does not count as trained.
        let stranger = Self.status(trained: ["kitchen": ["gw-a"], "office": ["gw-z"]])
        #expect(
            stranger.decisionLine(gatewayRooms: Self.rooms, classifier: true)
                == "decisions: the level rule until every room is trained (not yet: office)")
        #expect(!Self.arbiterDecidesByFingerprints(stranger))

        // A room without a gateway of its own (rooms.rooms_without_gateway) must be trained too.
        let hall: Set<String> = ["hall"]
        #expect(
            off.decisionLine(gatewayRooms: Self.rooms, withoutGateway: hall, classifier: true)
                == "decisions: the level rule until every room is trained (not yet: hall)")
        #expect(!Self.arbiterDecidesByFingerprints(off, withoutGateway: hall))
        let all = Self.status(trained: ["kitchen": ["gw-a", "gw-b"], "office": ["gw-a", "gw-b"], "hall": ["gw-a"]])
        #expect(
            all.decisionLine(gatewayRooms: Self.rooms, withoutGateway: hall, classifier: true)
                == "decisions: the fingerprint classifier (every room trained: hall, kitchen, office)")
        #expect(Self.arbiterDecidesByFingerprints(all, withoutGateway: hall))
    }
}
