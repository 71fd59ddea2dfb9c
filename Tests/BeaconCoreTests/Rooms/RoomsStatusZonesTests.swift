import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// `beaconbridge rooms status` on a site with zones (issue 46; docs/rooms.md "Large sites"): each gateway's zone,
/// and each zone's leader as the zone's own gateways elect it, from the retained availability alone.
@Suite struct RoomsStatusZonesTests {
    static func status(own: String) -> RoomsStatus {
        let settings = RoomZoneCoordinatorTests.settings()
        let gateway = GatewaySettings(id: own)
        return RoomsStatus(
            topics: settings.topics(prefix: "beaconbridge", own: gateway), rooms: settings.gatewayRooms(own: gateway),
            zones: settings.zones)
    }

    @Test func eachZoneShowsTheLeaderItsGatewaysElect() throws {
        var status = Self.status(own: "gw-b")
        #expect(status.leaders.map(\.leader) == [nil, nil], "nobody online yet")
        let online = ["gw-a": "offline", "gw-b": "online", "gw-0": "online", "gw-1": "online"]
        for (gateway, state) in online.sorted(by: { $0.key < $1.key }) {
            status.take(RoomCoordinatorTests.availability(gateway, state))
        }
        // gw-0 is the lowest online id of the site, but leads west only; gw-a is offline, so gw-b leads east.
        #expect(status.leaders.map(\.zone) == ["east", "west"])
        #expect(status.leaders.map(\.leader) == ["gw-b", "gw-0"])
        // The same as each zone's coordinators elect with that availability.
        for id in ["gw-b", "gw-1"] {
            var coordinator = RoomZoneCoordinatorTests.coordinator(id)
            _ = RoomCoordinatorTests.online(&coordinator, online.filter { $0.value == "online" }.keys.sorted())
            let zone = try #require(coordinator.topics.zone)
            #expect(coordinator.leader == status.leaders.first { $0.zone == zone }?.leader, "\(id) in \(zone)")
        }
        #expect(status.rows.map(\.zone) == ["west", "west", "east", "east"], "\(status.rows.map(\.gatewayID))")

        let table = status.table(now: .nan)
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ").prefix(4) == ["gateway", "room", "zone", "online"], "\(table)")
        let gwA = try #require(lines.first { $0.hasPrefix("gw-a ") }, "\(table)")
        #expect(gwA.split(separator: " ").prefix(4) == ["gw-a", "a", "east", "no"], "\(table)")
        #expect(lines.contains("zone east: leader gw-b (the lowest online id of gw-a, gw-b)"), "\(table)")
        #expect(lines.contains("zone west: leader gw-0 (the lowest online id of gw-0, gw-1)"), "\(table)")
        #expect(lines.contains("zone east's calibration and fingerprints (this gateway's zone):"), "\(table)")

        // West's leader goes: gw-1 leads west; east's leader is untouched. Then east has nobody online.
        status.take(RoomCoordinatorTests.availability("gw-0", "offline"))
        #expect(status.leaders.map(\.leader) == ["gw-b", "gw-1"])
        status.take(RoomCoordinatorTests.availability("gw-b", "offline"))
        #expect(
            status.table(now: .nan).contains("zone east: no leader (none of gw-a, gw-b is online)"),
            "\(status.table(now: .nan))")
    }

    @Test func withoutZonesOneLeaderForTheSiteAndNoZoneColumn() throws {
        var settings = RoomZoneCoordinatorTests.settings()
        settings.zones = []
        let gateway = GatewaySettings(id: "gw-b")
        var status = RoomsStatus(
            topics: settings.topics(prefix: "beaconbridge", own: gateway), rooms: settings.gatewayRooms(own: gateway),
            zones: settings.zones)
        for id in ["gw-a", "gw-1"] { status.take(RoomCoordinatorTests.availability(id, "online")) }
        #expect(status.leaders.map(\.zone) == [nil])
        #expect(status.leaders.map(\.leader) == ["gw-1"])
        let table = status.table(now: .nan)
        #expect(table.contains("site: leader gw-1 (the lowest online id of gw-0, gw-1, gw-a, gw-b)"), "\(table)")
        #expect(!table.contains("zone"), "\(table)")
        #expect(status.rows.allSatisfy { $0.zone == nil })
    }
}
