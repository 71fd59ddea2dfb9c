import BeaconRooms
import Foundation
import Testing

@testable import YAMLConfig

/// `rooms.zones` (issue 46, docs/rooms.md "Large sites") through the real YAML loader: what a zone changes for a
/// gateway (its gateways, offsets and topics), and every way a zone list can be wrong, each refused at its line.
@Suite struct RoomZonesSectionTests: SectionLoading {
    static let site = """
        gateway: {id: gw-a1}
        topics: {prefix: bb}
        rooms:
          enabled: true
          gateways: {gw-a1: a1, gw-a2: a2, gw-b1: b1, gw-b2: b2}
          receiver_offsets_db: {gw-a2: 2, gw-b1: -1}

        """

    @Test func aZoneNarrowsTheArbiterAndNamespacesTheTopics() throws {
        let configuration = try load(
            Self.site + """
                  zones:
                    - {name: east, gateways: [gw-a1, gw-a2], rooms: [a1, a2]}
                    - {name: west, gateways: [gw-b1, gw-b2], rooms: [b1, b2]}
                """
        ).get()
        let rooms = configuration.rooms
        #expect(rooms.zones.map(\.name) == ["east", "west"])
        #expect(rooms.zone(of: "gw-b2")?.name == "west")
        let arbiter = rooms.arbiterSettings(own: configuration.gateway)
        #expect(arbiter.gatewayRooms == ["gw-a1": "a1", "gw-a2": "a2"])
        #expect(arbiter.receiverOffsets == ["gw-a2": 2])
        let topics = rooms.topics(prefix: "bb", own: configuration.gateway)
        #expect(topics.zone == "east")
        #expect(topics.availabilityFilters == ["bb/gw-a1/availability", "bb/gw-a2/availability"])
        #expect(topics.sightingFilters == ["bb/gw-a1/sighting/#", "bb/gw-a2/sighting/#"])
        #expect(topics.state(beaconID: "ibeacon:x") == "bb/zones/east/rooms/ibeacon:x")
        #expect(topics.stateFilter == "bb/zones/east/rooms/+")
        #expect(topics.calibration == "bb/zones/east/rooms/calibration")
        #expect(topics.parse("bb/zones/east/rooms/ibeacon:x") == .state(beaconLevel: "ibeacon:x"))
        #expect(topics.parse("bb/zones/west/rooms/ibeacon:x") == nil, "another zone's decisions are not ours")
        #expect(topics.parse("bb/rooms/ibeacon:x") == nil)
        #expect(topics.parse("bb/gw-a2/sighting/ibeacon:x") == .sighting(gateway: "gw-a2"))
        #expect(topics.parse("bb/gw-a2/availability") == .availability(gateway: "gw-a2"))
    }

    @Test func aSiteWithoutZonesKeepsTodaysTopics() throws {
        let configuration = try load(Self.site).get()
        #expect(configuration.rooms.zones.isEmpty)
        let topics = configuration.rooms.topics(prefix: "bb", own: configuration.gateway)
        #expect(topics == RoomTopics(prefix: "bb"))
        #expect(topics.availabilityFilters == ["bb/+/availability"])
        #expect(topics.sightingFilters == ["bb/+/sighting/#"])
        #expect(topics.state(beaconID: "ibeacon:x") == "bb/rooms/ibeacon:x")
        #expect(configuration.rooms.arbiterSettings(own: configuration.gateway).gatewayRooms.count == 4)
    }

    @Test func aGatewayInTwoZonesIsRefusedWhereItIsListedAgain() {
        let lines = problems(
            Self.site + """
                  zones:
                    - {name: east, gateways: [gw-a1, gw-a2], rooms: [a1, a2]}
                    - {name: west, gateways: [gw-b1, gw-b2, gw-a2], rooms: [b1, b2]}
                """)
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:9:") && $0.contains("rooms.zones[1].gateways[2]")
                    && $0.contains("gateway `gw-a2` is in zone `east` already")
            }, "\(lines)")
    }

    @Test func aRoomInNoZoneAndAGatewayInNoZoneAreRefused() {
        let lines = problems(
            Self.site + """
                  zones:
                    - {name: east, gateways: [gw-a1, gw-a2], rooms: [a1, a2]}
                    - {name: west, gateways: [gw-b1], rooms: [b1]}
                """)
        #expect(lines.contains { $0.contains("rooms.zones") && $0.contains("room `b2` is in no zone") }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:5:") && $0.contains("rooms.gateways.gw-b2")
                    && $0.contains("gateway `gw-b2` is in no zone")
            }, "\(lines)")
    }

    @Test func aRoomAndItsGatewaysAreInOneZone() {
        let lines = problems(
            Self.site + """
                  zones:
                    - {name: east, gateways: [gw-a1, gw-a2], rooms: [a1, b2]}
                    - {name: west, gateways: [gw-b1, gw-b2], rooms: [b1, a2]}
                """)
        #expect(
            lines.contains {
                $0.contains("rooms.gateways.gw-a2") && $0.contains("its room `a2` is in zone `west`")
            }, "\(lines)")
        #expect(lines.contains { $0.contains("rooms.gateways.gw-b2") && $0.contains("room `b2` is in zone `east`") })
    }

    @Test func namesGatewaysAndRoomsMustExist() {
        let lines = problems(
            Self.site + """
                  zones:
                    - {name: east, gateways: [gw-a1, gw-a2, gw-zz], rooms: [a1, a2, attic]}
                    - {name: "we/st", gateways: [gw-b1, gw-b2], rooms: [b1, b2]}
                    - {name: east, gateways: [], rooms: []}
                    - {gateways: [gw-a1]}
                """)
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:8:") && $0.contains("rooms.zones[0].gateways[2]")
                    && $0.contains("`gw-zz` is not a gateway of rooms.gateways")
            }, "\(lines)")
        #expect(
            lines.contains {
                $0.contains("rooms.zones[0].rooms[2]") && $0.contains("`attic` is not the room of any gateway")
            })
        #expect(lines.contains { $0.contains("rooms.zones[1].name") && $0.contains("not a valid zone name") })
        #expect(lines.contains { $0.contains("rooms.zones[2].name") && $0.contains("declared twice") })
        #expect(lines.contains { $0.contains("rooms.zones[2].gateways") && $0.contains("at least one gateway") })
        #expect(lines.contains { $0.hasPrefix("t.yaml:11:") && $0.contains("rooms.zones[3].name") })
        #expect(lines.contains { $0.contains("rooms.zones[3].gateways[0]") && $0.contains("in zone `east` already") })
    }

    @Test func replayWaitCountsTheZonesGatewaysAndZonesIsReservedAsAGatewayID() {
        let zoned = """
              zones:
                - {name: east, gateways: [gw-a1, gw-a2], rooms: [a1, a2]}
                - {name: west, gateways: [gw-b1, gw-b2], rooms: [b1, b2]}

            """
        #expect(problems(Self.site + zoned + "  replay_wait_for_gateways: 2\n").isEmpty)
        let lines = problems(Self.site + zoned + "  replay_wait_for_gateways: 3\n")
        #expect(
            lines.contains {
                $0.contains("rooms.replay_wait_for_gateways") && $0.contains("zone `east`'s 2 gateway(s)")
            }, "\(lines)")
        let renamed = Self.site.replacingOccurrences(of: "gw-a1", with: "zones")
        let reserved = problems(renamed + zoned.replacingOccurrences(of: "gw-a1", with: "zones"))
        #expect(
            reserved.contains { $0.contains("gateway.id") && $0.contains("`zones` is the topic level") }, "\(reserved)")
    }
}
