import BeaconRooms
import Testing

@testable import YAMLConfig

/// The `rooms` section through the real YAML loader.
@Suite struct RoomsSectionTests: SectionLoading {
    @Test func offByDefault() throws {
        let rooms = try load("gateway: {id: hall}\n").get().rooms
        #expect(rooms == RoomSettings())
        #expect(!rooms.enabled)
    }

    @Test func valuesReachTheSettings() throws {
        let configuration = try load(
            """
            gateway: {id: gw-hall, room: hall}
            rooms:
              enabled: true
              gateways: {gw-kitchen: kitchen, gw-office: office}
              receiver_offsets_db: {gw-kitchen: 3.5, gw-hall: -2}
              margin_db: 7
              dwell_s: 5s
              median_window_s: 1m
              signal: smoothed
              leader_settle_s: 3
              replay_wait_for_gateways: 3
            """
        ).get()
        let rooms = configuration.rooms
        #expect(rooms.enabled)
        #expect(rooms.gateways == ["gw-kitchen": "kitchen", "gw-office": "office"])
        #expect(
            rooms.gatewayRooms(own: configuration.gateway) == [
                "gw-kitchen": "kitchen", "gw-office": "office", "gw-hall": "hall",
            ])
        #expect(rooms.arbiter.receiverOffsets == ["gw-kitchen": 3.5, "gw-hall": -2])
        #expect(rooms.arbiter.margin == 7 && rooms.arbiter.dwell == 5 && rooms.arbiter.medianWindow == 60)
        #expect(!rooms.arbiter.useRawRSSI)
        #expect(rooms.leaderSettle == 3 && rooms.replayWaitForGateways == 3)
        #expect(rooms.arbiterSettings(own: configuration.gateway).gatewayRooms["gw-hall"] == "hall")
    }

    @Test func problemsNameTheKeyAndLine() {
        let lines = problems(
            """
            gateway: {id: gw-hall}
            rooms:
              enabled: true
              gateways: {gw-kitchen: "kitchen/2"}
              receiver_offsets_db: {gw-nowhere: 3}
              dwell_s: -1
              signal: loud
            """)
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:4:") && $0.contains("rooms.gateways.gw-kitchen") && $0.contains("not a valid room")
            })
        #expect(
            lines.contains {
                $0.contains("rooms.receiver_offsets_db.gw-nowhere") && $0.contains("not a gateway of rooms.gateways")
            })
        #expect(lines.contains { $0.hasPrefix("t.yaml:6:") && $0.contains("rooms.dwell_s") })
        #expect(lines.contains { $0.hasPrefix("t.yaml:7:") && $0.contains("rooms.signal") })
        // This gateway has no room: neither in rooms.gateways nor gateway.room.
        #expect(lines.contains { $0.contains("rooms.gateways") && $0.contains("has no room") })
    }

    /// A replay waits (up to 60 s) for gateways of the site: more than the site has can never come.
    @Test func replayCannotWaitForMoreGatewaysThanTheSiteHas() {
        let site = "gateway: {id: gw-hall, room: hall}\nrooms:\n  enabled: true\n  gateways: {gw-kitchen: kitchen}\n"
        let lines = problems(site + "  replay_wait_for_gateways: 3\n")
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:5:") && $0.contains("rooms.replay_wait_for_gateways")
                    && $0.contains("more than the site's 2 gateway(s)")
            }, "\(lines)")
        #expect(problems(site + "  replay_wait_for_gateways: 2\n").isEmpty)
    }

    @Test func theRoomsTopicLevelIsNoGatewayID() {
        let lines = problems("gateway: {id: rooms, room: hall}\nrooms: {enabled: true}\n")
        #expect(lines.contains { $0.contains("gateway.id") && $0.contains("topic level of the room events") })
        #expect(problems("gateway: {id: rooms, room: hall}\n").isEmpty)
    }

    /// Reference tags: beacon ids (colons and all) to rooms of the site; a room the site does not have is named.
    @Test func referenceTagsNameRoomsOfTheSite() throws {
        let site = "gateway: {id: gw-hall, room: hall}\nrooms:\n  enabled: true\n  gateways: {gw-kitchen: kitchen}\n"
        let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:9"
        let rooms = try load(site + "  reference_tags:\n    \(tag): kitchen\n").get().rooms
        #expect(rooms.referenceTags == [tag: "kitchen"])
        let lines = problems(site + "  reference_tags:\n    \(tag): attic\n")
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:6:") && $0.contains("rooms.reference_tags[\"\(tag)\"]")
                    && $0.contains("`attic` is not a room of the site (hall, kitchen)")
            }, "\(lines)")
    }

    /// A room no gateway stands in (issue 43): declared in `rooms_without_gateway`, a room of the site for the
    /// classifier, training and reference tags; refused without the classifier, or when a gateway stands in it.
    @Test func roomsWithoutAGatewayAreRoomsOfTheSiteForTheClassifier() throws {
        let site = """
            gateway: {id: gw-hall, room: hall}
            rooms:
              enabled: true
              gateways: {gw-kitchen: kitchen}

            """
        let declared = site + "  rooms_without_gateway: [office]\n  fingerprint_classifier: true\n"
        let configuration = try load(declared + "  reference_tags: {tag-1: office}\n").get()
        let rooms = configuration.rooms
        #expect(rooms.roomsWithoutGateway == ["office"])
        #expect(rooms.siteRooms(own: configuration.gateway) == ["hall", "kitchen", "office"])
        let arbiter = rooms.arbiterSettings(own: configuration.gateway)
        #expect(arbiter.roomsWithoutGateway == ["office"])
        #expect(Set(arbiter.gatewayRooms.values) == ["hall", "kitchen"])
        #expect(rooms.referenceTags == ["tag-1": "office"])

        // Without the classifier nothing could ever name the room.
        let off = problems(site + "  rooms_without_gateway: [office]\n")
        #expect(
            off.contains {
                $0.hasPrefix("t.yaml:5:") && $0.contains("rooms.rooms_without_gateway")
                    && $0.contains("fingerprint_classifier: true")
            }, "\(off)")
        // A gateway's room, a reserved name, a bad name, a room listed twice: each at its place.
        let bad = problems(
            declared.replacing("[office]", with: "[kitchen, unknown, \"a/b\", office, office]"))
        for (index, text) in [
            (0, "has a gateway (`gw-kitchen` in rooms.gateways)"), (1, "reserved"), (2, "not a valid room"),
            (4, "listed twice"),
        ] {
            #expect(
                bad.contains { $0.contains("rooms.rooms_without_gateway[\(index)]") && $0.contains(text) },
                "\(index): \(bad)")
        }
        #expect(!bad.contains { $0.contains("rooms.rooms_without_gateway[3]") })
        #expect(bad.count == 4, "\(bad)")
    }

    /// With zones, a room without a gateway is listed in one zone and reaches only that zone's arbiter.
    @Test func aRoomWithoutAGatewayBelongsToOneZone() throws {
        let site = """
            gateway: {id: gw-hall}
            rooms:
              enabled: true
              fingerprint_classifier: true
              gateways: {gw-hall: hall, gw-kitchen: kitchen}
              rooms_without_gateway: [office]

            """
        let zoned =
            site + "  zones:\n    - {name: north, gateways: [gw-hall], rooms: [hall, office]}\n"
            + "    - {name: south, gateways: [gw-kitchen], rooms: [kitchen]}\n"
        let configuration = try load(zoned).get()
        #expect(configuration.rooms.arbiterSettings(own: configuration.gateway).roomsWithoutGateway == ["office"])
        let unzoned =
            site + "  zones:\n    - {name: north, gateways: [gw-hall], rooms: [hall]}\n"
            + "    - {name: south, gateways: [gw-kitchen], rooms: [kitchen]}\n"
        #expect(
            problems(unzoned).contains { $0.contains("rooms.zones") && $0.contains("room `office` is in no zone") })
        var kitchen = configuration.gateway
        kitchen.id = "gw-kitchen"
        #expect(configuration.rooms.arbiterSettings(own: kitchen).roomsWithoutGateway.isEmpty)
    }
}
