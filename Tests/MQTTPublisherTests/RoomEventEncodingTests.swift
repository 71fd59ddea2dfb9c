import BeaconEvents
import BeaconModel
import BeaconRooms
import Testing

/// Room events as the leader publishes them: topics, retain/QoS, order, and the JSON Schema in docs/schemas.
@Suite struct RoomEventEncodingTests {
    static let topics = RoomTopics(prefix: "home/ble")

    func encode(_ event: RoomEvent) throws -> [EventEnvelope] {
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(prefix: "home/ble"), gatewayID: "gw-a"),
            sequences: SequenceBlock(first: 10, end: 20))
        return try encoder.encode(event, topics: Self.topics)
    }

    @Test func aChangeIsExitEnterThenTheRetainedState() throws {
        let envelopes = try encode(
            RoomEvent(
                beaconID: "ibeacon:x/1", time: 1_700_000_100, room: "kitchen", from: "hall",
                hadRoom: true, since: 1_700_000_100, decision: 7, gatewayID: "gw-k", lead: 9.26))
        #expect(
            envelopes.map(\.topic) == [
                "home/ble/rooms/ibeacon:x_1/hall", "home/ble/rooms/ibeacon:x_1/kitchen",
                "home/ble/rooms/ibeacon:x_1",
            ])
        #expect(envelopes.map(\.sequence) == [10, 11, 12])
        #expect(envelopes.allSatisfy { $0.kind == .room && $0.qos == 1 && $0.retain })
        let schema = try JSONSchemaValidator.forKind("room")
        for envelope in envelopes {
            let json = try JSONValue(parsing: envelope.payload)
            #expect(schema.validate(json).isEmpty, "\(envelope.payload)")
        }
        let state = try JSONValue(parsing: envelopes[2].payload)
        #expect(
            state["event"] == .string("room") && state["room"] == .string("kitchen") && state["from"] == .string("hall")
        )
        #expect(state["decision"] == .int(7) && state["winner"] == .string("gw-k") && state["lead_db"] == .double(9.3))
        #expect(try JSONValue(parsing: envelopes[0].payload)["event"] == .string("exit"))
        #expect(try JSONValue(parsing: envelopes[1].payload)["event"] == .string("enter"))
        // The state reads back as what every gateway keeps.
        let announced = try #require(AnnouncedRoom(payload: Array(envelopes[2].payload.utf8)))
        #expect(
            announced
                == AnnouncedRoom(
                    beaconID: "ibeacon:x/1", room: "kitchen", since: 1_700_000_100,
                    time: 1_700_000_100, decision: 7, leader: "gw-a"))
        #expect(AnnouncedRoom(payload: Array(envelopes[1].payload.utf8)) == nil)
    }

    @Test func aFirstRoomIsEnterAndStateNotHomeIsExitAndState() throws {
        let first = try encode(
            RoomEvent(beaconID: "tag", time: 5, room: "hall", from: nil, hadRoom: false, since: 5, decision: 1))
        #expect(first.map(\.topic) == ["home/ble/rooms/tag/hall", "home/ble/rooms/tag"])
        #expect(try JSONValue(parsing: first[1].payload)["from"] == .null)
        let away = try encode(
            RoomEvent(beaconID: "tag", time: 9, room: nil, from: "hall", hadRoom: true, since: 9, decision: 2))
        #expect(away.map(\.topic) == ["home/ble/rooms/tag/hall", "home/ble/rooms/tag"])
        let state = try JSONValue(parsing: away[1].payload)
        #expect(state["room"] == .string("not_home"))
        #expect(AnnouncedRoom(payload: Array(away[1].payload.utf8))?.room == nil)
        let schema = try JSONSchemaValidator.forKind("room")
        for envelope in first + away { #expect(schema.validate(try JSONValue(parsing: envelope.payload)).isEmpty) }
    }

    @Test func theSiteRoomEntitiesNameNoGateway() throws {
        let discovery = HomeAssistantDiscovery(
            layout: TopicLayout(settings: TopicSettings(prefix: "home/ble"), gatewayID: "gw-b"),
            gatewayName: "Hall", softwareVersion: "1")
        let messages = discovery.roomMessages(
            beacons: [.init(id: "tag", name: "Keys")], topics: Self.topics,
            gateways: ["gw-b", "gw-a"])
        #expect(
            messages.map(\.topic) == [
                "homeassistant/sensor/beaconbridge_rooms/tag_room/config",
                "homeassistant/sensor/beaconbridge_rooms/tag_room_probability/config",
                "homeassistant/device_tracker/beaconbridge_rooms/tag_room_tracker/config",
            ])
        let probability = try JSONValue(parsing: messages[1].payload)
        #expect(probability["state_topic"] == .string("home/ble/rooms/tag/probabilities"))
        #expect(probability["unit_of_measurement"] == .string("%"))
        let sensor = try JSONValue(parsing: messages[0].payload)
        #expect(sensor["state_topic"] == .string("home/ble/rooms/tag"))
        #expect(sensor["unique_id"] == .string("beaconbridge_rooms_tag_room"))
        #expect(sensor["availability_mode"] == .string("any"))
        guard case let .array(availability)? = sensor["availability"] else {
            Issue.record("no availability")
            return
        }
        #expect(
            availability.map { $0["topic"] } == [
                .string("home/ble/gw-a/availability"), .string("home/ble/gw-b/availability"),
            ])
        // The same configs whichever gateway announces them.
        let other = HomeAssistantDiscovery(
            layout: TopicLayout(settings: TopicSettings(prefix: "home/ble"), gatewayID: "gw-a"),
            gatewayName: "Kitchen", softwareVersion: "1")
        #expect(
            other.roomMessages(
                beacons: [.init(id: "tag", name: "Keys")], topics: Self.topics, gateways: ["gw-a", "gw-b"]) == messages)
        let tracker = try JSONValue(parsing: messages[2].payload)
        #expect(
            tracker["payload_not_home"] == .string("not_home")
                && tracker["value_template"] == .string("{{ value_json.room }}"))
    }
}
