import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import BeaconRooms

/// A coordinator of one zone (`rooms.zones`, issue 46), set up as the daemon sets it up from the settings: it
/// elects among its zone's gateways only, takes evidence from them only, and announces on its zone's topics.
@Suite struct RoomZoneCoordinatorTests {
    static let t0: Timestamp = RoomCoordinatorTests.t0

    static func settings() -> RoomSettings {
        var settings = RoomSettings()
        settings.enabled = true
        settings.gateways = ["gw-a": "a", "gw-b": "b", "gw-0": "x", "gw-1": "y"]
        settings.zones = [
            RoomZone(name: "east", gateways: ["gw-a", "gw-b"], rooms: ["a", "b"]),
            RoomZone(name: "west", gateways: ["gw-0", "gw-1"], rooms: ["x", "y"]),
        ]
        return settings
    }

    static func coordinator(_ id: String) -> RoomCoordinator {
        let gateway = GatewaySettings(id: id)
        let settings = settings()
        return RoomCoordinator(
            gatewayID: id, topics: settings.topics(prefix: "beaconbridge", own: gateway),
            settings: settings.arbiterSettings(own: gateway), leaderSettle: 2)
    }

    @Test func aZoneElectsAmongItsOwnGatewaysAndDecidesItsOwnRooms() throws {
        let settings = Self.settings()
        #expect(settings.validate(gateway: GatewaySettings(id: "gw-b")).isEmpty)
        var b = Self.coordinator("gw-b")
        #expect(b.topics.zone == "east")
        // gw-0 is the lowest id of the site, but of the other zone: gw-b leads east once settled.
        _ = RoomCoordinatorTests.online(&b, ["gw-b", "gw-0", "gw-1"])
        #expect(b.leader == "gw-b")
        #expect(b.isLeader)
        // West's gateways hear the tag much louder: not east's evidence, so east decides among a and b only.
        var effects: [RoomCoordinator.Effect] = []
        for second in 0..<6 {
            let time = Self.t0 + Double(second)
            effects += b.receive(try RoomCoordinatorTests.sighting("gw-0", rssi: -40, at: time), wall: 10)
            effects += b.receive(try RoomCoordinatorTests.sighting("gw-a", rssi: -60, at: time), wall: 10)
            effects += b.advance(to: time, wall: 10)
        }
        let events = RoomCoordinatorTests.published(effects)
        #expect(events.map(\.room) == ["a"], "\(events)")
        // Announced on east's topics; a west state is not east's and is ignored.
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: "gw-b"),
            sequences: SequenceBlock(first: 1, end: 100))
        let topics = try events.flatMap { try encoder.encode($0, topics: b.topics) }.map(\.topic)
        #expect(topics.allSatisfy { $0.hasPrefix("beaconbridge/zones/east/rooms/") }, "\(topics)")
        #expect(b.topics.parse("beaconbridge/zones/west/rooms/tag") == nil)
        #expect(b.topics.parse("beaconbridge/rooms/tag") == nil)
        // East's own lower gateway comes online: it leads east from then on.
        #expect(
            b.receive(RoomCoordinatorTests.availability("gw-a", "online"), wall: 11) == [
                .leadership(isLeader: false, leader: "gw-a")
            ])
        // West's leader going offline changes nothing in east.
        #expect(b.receive(RoomCoordinatorTests.availability("gw-0", "offline"), wall: 12).isEmpty)
        #expect(b.leader == "gw-a")
    }
}
