import BeaconFormats
import BeaconModel
import BeaconRooms

extension HomeAssistantDiscovery {
    /// The site's room entities for each named beacon, announced by the room leader only (docs/rooms.md): a
    /// `sensor` whose state is the room (or `not_home`) and a `device_tracker` whose state is the room name,
    /// both on the beacon's retained `room` state topic. Their topics and unique ids name the site
    /// (`beaconbridge_rooms`), not a gateway, so whichever gateway leads announces the same configs; they are
    /// available while any gateway of `gateways` is online.
    public func roomMessages(beacons: [Beacon], topics: RoomTopics, gateways: [String]) -> [ControlMessage] {
        let availability = siteAvailability(gateways)
        let node = Self.roomsNode(topics)
        let suffix = topics.zone.map { " (\($0))" } ?? ""
        var out: [ControlMessage] = []
        for beacon in beacons {
            let state = topics.state(beaconID: beacon.id)
            let object = TopicLayout.slug(beacon.id)
            out.append(
                roomMessage(
                    "sensor", node: node, object: object + "_room", availability: availability,
                    [
                        ("name", .string("Room" + suffix)),
                        ("unique_id", .string(node + "_" + object + "_room")),
                        ("state_topic", .string(state)),
                        ("value_template", .string("{{ value_json.room }}")),
                        ("icon", .string("mdi:floor-plan")),
                        ("json_attributes_topic", .string(state)),
                        (
                            "json_attributes_template",
                            .string(
                                "{{ {'since': value_json.since, 'from': value_json.from, 'decision': value_json.decision, 'leader': value_json.gateway} | tojson }}"
                            )
                        ),
                    ], device: beaconDevice(beacon)))
            // The fingerprint classifier's belief (unknown until every room is trained): the decided room's
            // probability in %, every room's as attributes.
            let probabilities = topics.probabilities(beaconID: beacon.id)
            out.append(
                roomMessage(
                    "sensor", node: node, object: object + "_room_probability", availability: availability,
                    [
                        ("name", .string("Room probability" + suffix)),
                        (
                            "unique_id",
                            .string(node + "_" + object + "_room_probability")
                        ),
                        ("state_topic", .string(probabilities)),
                        (
                            "value_template",
                            .string(
                                "{{ ((value_json.probabilities[value_json.room] | float(0)) * 100) | round(0) if value_json.room in value_json.probabilities else 0 }}"
                            )
                        ),
                        ("unit_of_measurement", .string("%")),
                        ("state_class", .string("measurement")),
                        ("icon", .string("mdi:home-percent")),
                        ("json_attributes_topic", .string(probabilities)),
                        ("json_attributes_template", .string("{{ value_json.probabilities | tojson }}")),
                    ], device: beaconDevice(beacon)))
            out.append(
                roomMessage(
                    "device_tracker", node: node, object: object + "_room_tracker", availability: availability,
                    [
                        ("name", .string("Room tracker" + suffix)),
                        ("unique_id", .string(node + "_" + object + "_room_tracker")),
                        ("state_topic", .string(state)),
                        ("value_template", .string("{{ value_json.room }}")),
                        ("payload_not_home", .string(RoomEvent.notHome)),
                        ("source_type", .string("bluetooth_le")),
                    ], device: beaconDevice(beacon)))
        }
        return out
    }

    // MARK: Training (issue 29)

    /// The site's training entities, announced by the leader (`leader`, whose command topic the buttons use; a
    /// new leader announces the same unique ids with its own topic): per room a `sensor` of its fingerprint's
    /// quality (0-1, from the retained `<prefix>/rooms/fingerprint/<room>`; 0 once forgotten), and, with
    /// `training.device`, a `button` "Train <room>" whose press publishes the train command for that device.
    public func trainingMessages(
        rooms: [String], leader: String, topics: RoomTopics, gateways: [String], training: TrainingSettings
    ) -> [ControlMessage] {
        let availability = siteAvailability(gateways)
        let node = Self.roomsNode(topics)
        let device: JSONValue = .object([
            ("identifiers", .array([.string(node)])),
            ("name", .string("BeaconBridge rooms" + (topics.zone.map { " " + $0 } ?? ""))),
            ("manufacturer", .string("BeaconBridge")),
            ("model", .string("Room arbiter")),
        ])
        let command = TopicLayout(settings: layout.settings, gatewayID: leader).roomsCommandBase + "/train"
        var out: [ControlMessage] = []
        for room in Set(rooms).sorted() {
            let object = TopicLayout.slug(room)
            out.append(
                roomMessage(
                    "sensor", node: node, object: "fingerprint_" + object, availability: availability,
                    [
                        ("name", .string(room + " fingerprint quality")),
                        ("unique_id", .string(node + "_fingerprint_" + object)),
                        ("state_topic", .string(topics.fingerprint(room: room))),
                        ("value_template", .string("{{ value_json.quality if value_json is defined else 0 }}")),
                        ("icon", .string("mdi:fingerprint")),
                        ("state_class", .string("measurement")),
                    ], device: device))
            guard let id = training.device else { continue }
            let press = JSONValue.object([
                ("id", .string("ha-" + room)), ("room", .string(room)), ("device", .string(id)),
                ("seconds", .double(training.seconds)),
            ]).serialized
            out.append(
                roomMessage(
                    "button", node: node, object: "train_" + object, availability: availability,
                    [
                        ("name", .string("Train " + room)),
                        ("unique_id", .string(node + "_train_" + object)),
                        ("command_topic", .string(command)),
                        ("payload_press", .string(press)),
                        ("icon", .string("mdi:walk")),
                    ], device: device))
        }
        return out
    }

    /// Available while any gateway of the site is online (with `availability_mode: any`).
    private func siteAvailability(_ gateways: [String]) -> JSONValue {
        .array(
            gateways.sorted().map { gateway in
                .object([
                    ("topic", .string(TopicLayout(settings: layout.settings, gatewayID: gateway).availability)),
                    ("payload_available", .string("online")),
                    ("payload_not_available", .string("offline")),
                ])
            })
    }

    /// The node id of the site's room entities.
    public static let roomsNodeID = "beaconbridge_rooms"

    /// The node id of the room entities of `topics`' zone: `beaconbridge_rooms`, or `beaconbridge_rooms_<zone>` in
    /// a zone (each zone's leader announces its own; a beacon heard in two zones has a room sensor in each).
    public static func roomsNode(_ topics: RoomTopics) -> String {
        roomsNodeID + (topics.zone.map { "_" + TopicLayout.slug($0) } ?? "")
    }

    private func roomMessage(
        _ component: String, node: String, object: String, availability: JSONValue, _ members: [(String, JSONValue)],
        device: JSONValue
    ) -> ControlMessage {
        let common: [(String, JSONValue)] = [
            ("availability", availability),
            ("availability_mode", .string("any")),
            ("qos", .int(1)),
            ("device", device),
            ("origin", .object([("name", .string("BeaconBridge")), ("sw_version", .string(softwareVersion))])),
        ]
        let topic =
            layout.settings.homeAssistant.discoveryPrefix + "/" + component + "/" + node + "/" + object + "/config"
        return ControlMessage(
            topic: topic, payload: JSONValue.object(members + common).serialized, qos: 1, retain: true)
    }
}
