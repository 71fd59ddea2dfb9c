/// Builds the retained Home Assistant MQTT discovery configs (docs/mqtt.md lists every key):
/// - per configured beacon: a `device_tracker`, `sensor`s for distance and RSSI, a presence `binary_sensor`;
/// - per region and beacon: a presence `binary_sensor` (inside / outside);
/// - for the gateway: an outbox backlog `sensor` (so the gateway device exists for `via_device`).
/// Every entity lists the gateway's availability topic and carries a `device` and an `origin` block.
public struct HomeAssistantDiscovery: Sendable {
    /// One beacon to announce.
    public struct Beacon: Sendable, Equatable {
        public var id: String
        public var name: String
        public init(id: String, name: String) { self.id = id; self.name = name }
    }

    public var layout: TopicLayout
    /// Human-readable gateway name (the device name in Home Assistant).
    public var gatewayName: String
    public var softwareVersion: String

    public init(layout: TopicLayout, gatewayName: String, softwareVersion: String) {
        self.layout = layout
        self.gatewayName = gatewayName
        self.softwareVersion = softwareVersion
    }

    /// All discovery configs, retained, QoS 1.
    public func messages(beacons: [Beacon], regions: [String]) -> [ControlMessage] {
        var out = [gatewayBacklogSensor()]
        for beacon in beacons {
            out.append(deviceTracker(beacon))
            out.append(sensor(beacon, quantity: "distance", name: "Distance", deviceClass: "distance", unit: "m"))
            out.append(sensor(beacon, quantity: "rssi", name: "RSSI", deviceClass: "signal_strength", unit: "dBm"))
            out.append(presenceSensor(beacon))
            for region in regions { out.append(regionSensor(beacon, region: region)) }
        }
        return out
    }

    public var gatewayDeviceID: String { layout.discoveryNodeID }

    public func beaconDeviceID(_ beaconID: String) -> String { "beaconbridge_beacon_" + TopicLayout.slug(beaconID) }

    func deviceTracker(_ beacon: Beacon) -> ControlMessage {
        let topic = layout.presence(beaconID: beacon.id)
        return message("device_tracker", object: objectID(beacon, "tracker"), [
            ("name", .null),
            ("unique_id", .string(uniqueID(beacon, "tracker"))),
            ("state_topic", .string(topic)),
            ("value_template", .string("{{ value_json.state }}")),
            ("payload_home", .string("seen")),
            ("payload_not_home", .string("away")),
            ("source_type", .string("bluetooth_le")),
            ("json_attributes_topic", .string(topic)),
        ], device: beaconDevice(beacon))
    }

    func sensor(_ beacon: Beacon, quantity: String, name: String, deviceClass: String, unit: String) -> ControlMessage {
        message("sensor", object: objectID(beacon, quantity), [
            ("name", .string(name)),
            ("unique_id", .string(uniqueID(beacon, quantity))),
            ("state_topic", .string(layout.sighting(beaconID: beacon.id))),
            ("value_template", .string("{{ value_json.\(quantity) }}")),
            ("device_class", .string(deviceClass)),
            ("unit_of_measurement", .string(unit)),
            ("state_class", .string("measurement")),
        ], device: beaconDevice(beacon))
    }

    func presenceSensor(_ beacon: Beacon) -> ControlMessage {
        message("binary_sensor", object: objectID(beacon, "presence"), [
            ("name", .string("Presence")),
            ("unique_id", .string(uniqueID(beacon, "presence"))),
            ("state_topic", .string(layout.presence(beaconID: beacon.id))),
            ("value_template", .string("{{ value_json.state }}")),
            ("payload_on", .string("seen")),
            ("payload_off", .string("away")),
            ("device_class", .string("presence")),
        ], device: beaconDevice(beacon))
    }

    func regionSensor(_ beacon: Beacon, region: String) -> ControlMessage {
        let suffix = "region_" + TopicLayout.slug(region)
        return message("binary_sensor", object: objectID(beacon, suffix), [
            ("name", .string(region)),
            ("unique_id", .string(uniqueID(beacon, suffix))),
            ("state_topic", .string(layout.region(region, beaconID: beacon.id))),
            ("value_template", .string("{{ value_json.state }}")),
            ("payload_on", .string("inside")),
            ("payload_off", .string("outside")),
            ("device_class", .string("presence")),
        ], device: beaconDevice(beacon))
    }

    func gatewayBacklogSensor() -> ControlMessage {
        message("sensor", object: "outbox_rows", [
            ("name", .string("Outbox backlog")),
            ("unique_id", .string(gatewayDeviceID + "_outbox_rows")),
            ("state_topic", .string(layout.telemetry)),
            ("value_template", .string("{{ value_json.counters.outbox_rows }}")),
            ("state_class", .string("measurement")),
            ("entity_category", .string("diagnostic")),
        ], device: gatewayDevice())
    }

    func gatewayDevice() -> JSONValue {
        .object([
            ("identifiers", .array([.string(gatewayDeviceID)])),
            ("name", .string(gatewayName)),
            ("manufacturer", .string("BeaconBridge")),
            ("model", .string("BLE beacon gateway")),
            ("sw_version", .string(softwareVersion)),
        ])
    }

    func beaconDevice(_ beacon: Beacon) -> JSONValue {
        .object([
            ("identifiers", .array([.string(beaconDeviceID(beacon.id))])),
            ("name", .string(beacon.name)),
            ("model", .string("BLE beacon")),
            ("via_device", .string(gatewayDeviceID)),
        ])
    }

    private func objectID(_ beacon: Beacon, _ suffix: String) -> String { TopicLayout.slug(beacon.id) + "_" + suffix }

    private func uniqueID(_ beacon: Beacon, _ suffix: String) -> String {
        gatewayDeviceID + "_" + TopicLayout.slug(beacon.id) + "_" + suffix
    }

    private func message(_ component: String, object: String, _ members: [(String, JSONValue)],
                         device: JSONValue) -> ControlMessage {
        let common: [(String, JSONValue)] = [
            ("availability", .array([.object([
                ("topic", .string(layout.availability)),
                ("payload_available", .string("online")),
                ("payload_not_available", .string("offline")),
            ])])),
            ("qos", .int(1)),
            ("device", device),
            ("origin", .object([
                ("name", .string("BeaconBridge")),
                ("sw_version", .string(softwareVersion)),
            ])),
        ]
        return ControlMessage(topic: layout.discoveryConfig(component: component, objectID: object),
                              payload: JSONValue.object(members + common).serialized, qos: 1, retain: true)
    }
}
