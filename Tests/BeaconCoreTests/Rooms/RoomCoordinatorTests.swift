import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import BeaconRooms

/// The in-gateway arbiter's leader election, silent decisions, takeover and inbound parsing, on messages shaped
/// exactly as gateways publish them (encoded by `EventEncoder`).
@Suite struct RoomCoordinatorTests {
    static let t0: Timestamp = 1_700_000_000
    static let settings = RoomArbiterSettings(gatewayRooms: ["gw-a": "a", "gw-b": "b", "gw-c": "c"])
    static let topics = RoomTopics(prefix: "beaconbridge")

    static func coordinator(_ id: String) -> RoomCoordinator {
        RoomCoordinator(gatewayID: id, topics: topics, settings: settings, leaderSettle: 2)
    }

    static func availability(_ gateway: String, _ state: String) -> InboundMessage {
        InboundMessage(topic: "beaconbridge/\(gateway)/availability", payload: Array(state.utf8))
    }

    /// A sighting exactly as gateway `gateway` publishes it.
    static func sighting(_ gateway: String, rssi: Int, at time: Timestamp, beacon: String = "tag") throws
        -> InboundMessage
    {
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: gateway),
            sequences: SequenceBlock(first: 1, end: 100))
        let snapshot = BeaconSnapshot(
            beaconID: beacon, format: "ibeacon", identifiers: [], address: BluetoothAddress(rawValue: 1),
            name: nil, rssi: rssi, smoothedRSSI: Double(rssi), distance: 2, measuredPower: -59,
            reportRate: 1, lastSeen: time, fields: [:])
        let envelope = try #require(try encoder.encode(.sighting(SightingEvent(time: time, beacon: snapshot))).first)
        return InboundMessage(topic: envelope.topic, payload: Array(envelope.payload.utf8))
    }

    /// A retained room state exactly as leader `leader` publishes it.
    static func state(_ leader: String, beacon: String = "tag", room: String?, decision: UInt64, at time: Timestamp)
        throws -> InboundMessage
    {
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: leader),
            sequences: SequenceBlock(first: 1, end: 100))
        let event = RoomEvent(
            beaconID: beacon, time: time, room: room, from: nil, hadRoom: false, since: time, decision: decision)
        let envelope = try #require(try encoder.encode(event, topics: topics).last)
        return InboundMessage(topic: envelope.topic, payload: Array(envelope.payload.utf8))
    }

    static func published(_ effects: [RoomCoordinator.Effect]) -> [RoomEvent] {
        effects.flatMap { effect -> [RoomEvent] in if case let .publish(events) = effect { events } else { [] } }
    }

    /// Connected, every listed gateway online (own birth back at wall 0), settled at wall 10.
    static func online(_ coordinator: inout RoomCoordinator, _ gateways: [String]) -> [RoomCoordinator.Effect] {
        var effects = coordinator.connection(true, wall: 0)
        for gateway in gateways { effects += coordinator.receive(availability(gateway, "online"), wall: 0) }
        effects += coordinator.advance(to: t0, wall: 10)
        return effects
    }

    @Test func theLowestOnlineGatewayLeadsOnceSettled() {
        var b = Self.coordinator("gw-b")
        _ = b.connection(true, wall: 0)
        _ = b.receive(Self.availability("gw-b", "online"), wall: 0)
        _ = b.receive(Self.availability("gw-c", "online"), wall: 0)
        // Lowest online, but not settled yet: other gateways' retained availability may still be arriving.
        #expect(b.advance(to: Self.t0, wall: 1).isEmpty)
        #expect(!b.isLeader && b.leader == "gw-b")
        #expect(b.advance(to: Self.t0, wall: 2) == [.leadership(isLeader: true, leader: "gw-b")])
        // A lower gateway comes online: it leads from then on.
        #expect(
            b.receive(Self.availability("gw-a", "online"), wall: 3) == [.leadership(isLeader: false, leader: "gw-a")])
        // Its last will: back to gw-b.
        #expect(
            b.receive(Self.availability("gw-a", "offline"), wall: 4) == [.leadership(isLeader: true, leader: "gw-b")])
        // A gateway that is not part of the site does not count.
        _ = b.receive(Self.availability("gw-0", "online"), wall: 5)
        #expect(b.isLeader)
        // Losing the broker: not leading at once.
        #expect(b.connection(false, wall: 6) == [.leadership(isLeader: false, leader: nil)])
    }

    @Test func withoutItsOwnBirthBackAGatewayNeverLeads() {
        var a = Self.coordinator("gw-a")
        _ = a.connection(true, wall: 0)
        #expect(a.advance(to: Self.t0, wall: 100).isEmpty)
        #expect(!a.isLeader && a.leader == nil)
    }

    @Test func aNonLeaderDecidesSilentlyAndTakesOverContinuingTheDecisionNumbers() throws {
        var b = Self.coordinator("gw-b")
        _ = Self.online(&b, ["gw-a", "gw-b", "gw-c"])
        #expect(!b.isLeader)
        // gw-a announced the tag in room a as its 4th decision.
        _ = b.receive(try Self.state("gw-a", room: "a", decision: 4, at: Self.t0), wall: 11)
        // Evidence says room b: gw-b's own sightings much louder than gw-a's heard through the broker.
        var silent: [RoomCoordinator.Effect] = []
        for second in 1...60 {
            let time = Self.t0 + Double(second)
            silent += b.ownSighting(RoomSighting(gatewayID: "gw-b", beaconID: "tag", time: time, rssi: -55))
            silent += b.receive(try Self.sighting("gw-a", rssi: -85, at: time + 0.3), wall: 11)
            silent += b.advance(to: time + 0.5, wall: 11)
        }
        #expect(Self.published(silent).isEmpty)
        #expect(b.arbiter.room(of: "tag") == .some("b"))
        #expect(b.counters.peerSightings == 60 && b.counters.ownSightings == 60)
        // gw-a's last will: gw-b leads and announces where its decision differs, numbered after gw-a's.
        let takeover = b.receive(Self.availability("gw-a", "offline"), wall: 12)
        #expect(takeover.first == .leadership(isLeader: true, leader: "gw-b"))
        let events = Self.published(takeover)
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.room == "b" && event.from == "a" && event.hadRoom && event.decision == 5)
        // Its own state coming back from the broker changes nothing.
        _ = b.receive(try Self.state("gw-b", room: "b", decision: 5, at: event.time), wall: 13)
        #expect(b.announced["tag"]?.decision == 5)
    }

    @Test func aNewLeaderWithoutEvidenceRestoresTheRetainedStateAndAnnouncesNothing() throws {
        var c = Self.coordinator("gw-c")
        _ = c.connection(true, wall: 0)
        _ = c.receive(Self.availability("gw-c", "online"), wall: 0)
        _ = c.receive(try Self.state("gw-a", room: "a", decision: 2, at: Self.t0 - 10), wall: 0)
        let effects = c.advance(to: Self.t0, wall: 5)
        #expect(effects == [.leadership(isLeader: true, leader: "gw-c")])
        #expect(c.arbiter.room(of: "tag") == .some("a"))
        // Then the tag walks into c: decision 3, from a.
        var walk: [RoomCoordinator.Effect] = []
        for second in 1...60 {
            let time = Self.t0 + Double(second)
            walk += c.receive(try Self.sighting("gw-a", rssi: second < 10 ? -60 : -85, at: time), wall: 6)
            walk += c.ownSighting(
                RoomSighting(gatewayID: "gw-c", beaconID: "tag", time: time + 0.5, rssi: second < 10 ? -80 : -55))
            walk += c.advance(to: time + 0.9, wall: 6)
        }
        let events = Self.published(walk)
        #expect(events.map(\.room) == ["c"])
        #expect(events.first?.from == "a" && events.first?.decision == 3 && events.first?.gatewayID == "gw-c")
    }

    @Test func theLeaderAnnouncesFirstRoomsAndNotHomeWithIncreasingNumbers() throws {
        var a = Self.coordinator("gw-a")
        _ = Self.online(&a, ["gw-a", "gw-b"])
        #expect(a.isLeader)
        var effects: [RoomCoordinator.Effect] = []
        for second in 1...20 {
            let time = Self.t0 + Double(second)
            effects += a.ownSighting(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: time, rssi: -55))
            effects += a.receive(try Self.sighting("gw-b", rssi: -80, at: time + 0.5), wall: 11)
            effects += a.advance(to: time + 0.9, wall: 11)
        }
        // Silence for longer than the away timeout.
        for second in 21...100 { effects += a.advance(to: Self.t0 + Double(second), wall: 11) }
        let events = Self.published(effects)
        #expect(events.map(\.roomName) == ["a", "not_home"])
        #expect(events.map(\.decision) == [1, 2])
        #expect(events.first?.hadRoom == false && events.last?.from == "a")
    }

    @Test func ownEchoesAreDroppedAndMalformedMessagesIgnored() throws {
        var b = Self.coordinator("gw-b")
        _ = b.receive(try Self.sighting("gw-b", rssi: -50, at: Self.t0), wall: 0)
        #expect(b.counters.echoesDropped == 1 && b.counters.peerSightings == 0)
        #expect(b.arbiter.tracks.isEmpty)
        let garbage: [InboundMessage] = [
            InboundMessage(topic: "beaconbridge/gw-a/sighting/tag", payload: Array("not json".utf8)),
            InboundMessage(topic: "beaconbridge/gw-a/sighting/tag", payload: [0xFF, 0xFE, 0x00]),
            InboundMessage(
                topic: "beaconbridge/gw-a/sighting/tag",
                payload: Array(#"{"kind":"sighting","beacon_id":"tag","time":1e400,"rssi":-50}"#.utf8)),
            InboundMessage(
                topic: "beaconbridge/gw-a/sighting/tag",
                payload: Array(#"{"kind":"sighting","beacon_id":"tag","time":5,"rssi":"loud"}"#.utf8)),
            InboundMessage(
                topic: "beaconbridge/gw-a/sighting/tag", payload: Array(String(repeating: "[", count: 10_000).utf8)),
            InboundMessage(
                topic: "beaconbridge/rooms/tag",
                payload: Array(
                    #"{"kind":"room","event":"room","beacon_id":"tag","room":"a","time":5,"decision":-1,"gateway":"x"}"#
                        .utf8)),
            InboundMessage(topic: "beaconbridge/rooms/tag", payload: Array(repeating: 0x20, count: 100_000)),
        ]
        for message in garbage { #expect(b.receive(message, wall: 0).isEmpty) }
        #expect(b.counters.malformed == garbage.count)
        // A "gone" sighting (RSSI null, or no RSSI at all) is documented, not malformed: counted apart, no evidence.
        for payload in [
            #"{"kind":"sighting","beacon_id":"tag","time":5,"rssi":null,"rssi_smoothed":null}"#,
            #"{"kind":"sighting","beacon_id":"tag","time":6}"#,
        ] {
            let gone = InboundMessage(topic: "beaconbridge/gw-a/sighting/tag", payload: Array(payload.utf8))
            #expect(b.receive(gone, wall: 0).isEmpty)
        }
        #expect(b.counters.peerGone == 2 && b.counters.malformed == garbage.count && b.counters.peerSightings == 0)
        #expect(b.arbiter.tracks.isEmpty && b.announced.isEmpty)
        // Topics outside the filters' shapes are nothing.
        #expect(Self.topics.parse("beaconbridge/gw-a/presence/tag") == nil)
        #expect(Self.topics.parse("beaconbridge/rooms/tag/a") == nil)
        #expect(Self.topics.parse("other/gw-a/availability") == nil)
        #expect(Self.topics.parse("beaconbridge/gw-a/sighting/tag") == .sighting(gateway: "gw-a"))
    }

    @Test func decisionsAndSwitchesAreCountedForTelemetry() throws {
        var a = Self.coordinator("gw-a")
        _ = Self.online(&a, ["gw-a"])
        #expect(a.isLeader)
        // Heard loud by gw-a first (first room: a decision, not a switch), then by gw-b (a switch), then by nobody
        // (not_home after the away timeout: a decision, not a switch).
        for second in 1...90 {
            let time = Self.t0 + Double(second)
            let nearA = second <= 30
            _ = a.ownSighting(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: time, rssi: nearA ? -55 : -85))
            _ = a.receive(try Self.sighting("gw-b", rssi: nearA ? -85 : -55, at: time + 0.3), wall: 11)
            _ = a.advance(to: time + 0.5, wall: 11)
        }
        #expect(a.arbiter.room(of: "tag") == .some("b"))
        for second in 91...200 { _ = a.advance(to: Self.t0 + Double(second), wall: 12) }
        #expect(a.arbiter.room(of: "tag") == .some(nil))
        #expect(a.counters.decisions == 3)
        #expect(a.counters.switches == 1)
        #expect(a.counters.published == 3)
        #expect(a.trackedBeacons == 1)
        _ = a.receive(InboundMessage(topic: "beaconbridge/gw-b/sighting/tag", payload: Array("{".utf8)), wall: 13)
        #expect(a.counters.malformed == 1)
    }

    @Test func aReloadAppliesNewGatewaysAndKeepsTheDecisions() throws {
        var a = Self.coordinator("gw-a")
        _ = Self.online(&a, ["gw-a"])
        var effects: [RoomCoordinator.Effect] = []
        for second in 1...20 {
            let time = Self.t0 + Double(second)
            effects += a.ownSighting(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: time, rssi: -55))
            effects += a.advance(to: time + 0.5, wall: 11)
        }
        #expect(Self.published(effects).map(\.room) == ["a"])
        // SIGHUP: gw-a's room is renamed; its evidence counts for the kitchen and the decision follows, numbered
        // after the first (kept across the reload).
        var settings = Self.settings
        settings.gatewayRooms["gw-a"] = "kitchen"
        #expect(a.reconfigure(settings: settings, leaderSettle: 2, wall: 12).isEmpty)
        effects = []
        for second in 21...60 {
            let time = Self.t0 + Double(second)
            effects += a.ownSighting(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: time, rssi: -55))
            effects += a.advance(to: time + 0.5, wall: 12)
        }
        let renamed = try #require(Self.published(effects).first)
        #expect(renamed.room == "kitchen" && renamed.from == "a" && renamed.decision == 2)
        // A gateway dropped from the list is no candidate any more: gw-b leads when gw-a is not listed.
        var b = Self.coordinator("gw-b")
        _ = Self.online(&b, ["gw-a", "gw-b"])
        #expect(!b.isLeader)
        settings.gatewayRooms["gw-a"] = nil
        #expect(
            b.reconfigure(settings: settings, leaderSettle: 2, wall: 13).first
                == .leadership(isLeader: true, leader: "gw-b"))
    }

    @Test func theNumberOfBeaconsTrackedIsBounded() throws {
        var b = Self.coordinator("gw-b")
        for index in 0..<(RoomCoordinator.maxBeacons + 10) {
            _ = b.ownSighting(RoomSighting(gatewayID: "gw-b", beaconID: "tag-\(index)", time: Self.t0, rssi: -60))
        }
        #expect(b.arbiter.tracks.count == RoomCoordinator.maxBeacons)
        #expect(b.counters.beaconsRefused == 10)
    }

    @Test func aLeaderBackAfterLosingTheBrokerPublishesTheStatesAgain() throws {
        var a = Self.coordinator("gw-a")
        let first = Self.online(&a, ["gw-a"])
        #expect(first == [.leadership(isLeader: true, leader: "gw-a")])
        _ = a.receive(try Self.state("gw-a", room: "a", decision: 3, at: Self.t0 - 5), wall: 11)
        #expect(a.connection(false, wall: 12) == [.leadership(isLeader: false, leader: nil)])
        _ = a.connection(true, wall: 20)
        _ = a.receive(Self.availability("gw-a", "online"), wall: 20)
        let back = a.advance(to: Self.t0 + 1, wall: 23)
        #expect(back.first == .leadership(isLeader: true, leader: "gw-a"))
        let again = back.flatMap { effect -> [RoomEvent] in
            if case let .republish(events) = effect { events } else { [] }
        }
        #expect(again.map(\.room) == ["a"] && again.map(\.decision) == [3])
        // Nothing new was decided: no new decision numbers.
        #expect(Self.published(back).isEmpty)
        #expect(a.announced["tag"]?.decision == 3)
    }
}
