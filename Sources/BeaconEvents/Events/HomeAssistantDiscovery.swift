import BeaconFormats
import BeaconModel
import BeaconTracking

/// Builds the retained Home Assistant MQTT discovery configs (docs/mqtt.md lists every key,
/// docs/home-assistant.md what each entity does):
/// - per configured beacon: a `device_tracker`, `sensor`s for distance and RSSI, a presence `binary_sensor`;
/// - per region and beacon, when the region's `match` can select the beacon: a presence `binary_sensor`;
/// - for the gateway: an outbox backlog `sensor` (so the gateway device exists).
///
/// Several gateways may announce the same beacon: the beacon device (identified by the beacon id alone) is
/// shared and described identically by every gateway, and each gateway's entities carry its name, so a beacon
/// heard by "Kitchen gateway" and "Hall gateway" has "Keys Kitchen gateway distance" and "Keys Hall gateway
/// distance" instead of two "Keys Distance". Every entity lists the gateway's availability topic and carries a
/// `device` and an `origin` block.
public struct HomeAssistantDiscovery: Sendable {
    /// One beacon to announce.
    public struct Beacon: Sendable, Equatable {
        public var id: String
        public var name: String
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// One region: its name (the topic level and entity id part) and what it selects.
    public struct Region: Sendable, Equatable {
        public var name: String
        public var match: RegionMatch
        /// The typical device its teach buttons teach (`taught_like`); nil: no buttons.
        public var taughtLike: String?
        public init(name: String, match: RegionMatch = RegionMatch(), taughtLike: String? = nil) {
            self.name = name
            self.match = match
            self.taughtLike = taughtLike
        }
        public init(_ rule: RegionRule) { self.init(name: rule.name, match: rule.match, taughtLike: rule.taughtLike) }

        /// The region's name for people: `front_door` -> `Front door`.
        public var title: String { HomeAssistantDiscovery.title(name) }
    }

    public var layout: TopicLayout
    /// Human-readable gateway name (the gateway device's name and the prefix of every entity name).
    public var gatewayName: String
    public var softwareVersion: String
    /// `expire_after` (seconds) of the distance and RSSI sensors: after this long without a sighting Home
    /// Assistant shows them unavailable instead of a stale value; nil leaves it out.
    public var sensorExpiry: Int?

    public init(layout: TopicLayout, gatewayName: String, softwareVersion: String, sensorExpiry: Int? = nil) {
        self.layout = layout
        self.gatewayName = gatewayName
        self.softwareVersion = softwareVersion
        self.sensorExpiry = sensorExpiry
    }

    /// The sensors' expiry for tracker settings: the away timeout plus one sighting interval (a present beacon
    /// is sighted at least that often), rounded up to whole seconds.
    public static func sensorExpiry(for settings: TrackerSettings) -> Int {
        let seconds = settings.awayTimeout + settings.publish.sightingInterval
        guard seconds.isFinite, seconds > 0 else { return 1 }
        return Int(min(seconds.rounded(.up), 86_400 * 30))
    }

    /// All discovery configs, retained, QoS 1.
    public func messages(beacons: [Beacon], regions: [Region]) -> [ControlMessage] {
        var out = [gatewayBacklogSensor()] + gatewayHealthSensors()
        for beacon in beacons {
            out.append(deviceTracker(beacon))
            out.append(
                sensor(
                    beacon, quantity: "distance", name: "distance", deviceClass: "distance", unit: "m",
                    diagnostic: false))
            out.append(
                sensor(
                    beacon, quantity: "rssi", name: "RSSI", deviceClass: "signal_strength", unit: "dBm",
                    diagnostic: true))
            out.append(presenceSensor(beacon))
            for region in regions where region.match.canSelect(beaconID: beacon.id) {
                out.append(regionSensor(beacon, region: region))
            }
        }
        return out + teachButtons(regions: regions)
    }

    public var gatewayDeviceID: String { layout.discoveryNodeID }

    /// The beacon's device: the same on every gateway, so Home Assistant shows one device per beacon.
    public func beaconDeviceID(_ beaconID: String) -> String { "beaconbridge_beacon_" + TopicLayout.slug(beaconID) }

    /// The tracker reads `seen` / `away`; its attributes are the beacon's identity only (no per-event values,
    /// which would freeze at the last presence change next to the live distance sensor).
    func deviceTracker(_ beacon: Beacon) -> ControlMessage {
        let topic = layout.presence(beaconID: beacon.id)
        return message(
            "device_tracker", object: objectID(beacon, "tracker"),
            [
                ("name", .string(gatewayName)),
                ("unique_id", .string(uniqueID(beacon, "tracker"))),
                ("state_topic", .string(topic)),
                ("value_template", .string(HomeAssistantDiscovery.presenceTemplate)),
                ("payload_home", .string("seen")),
                ("payload_not_home", .string("away")),
                ("source_type", .string("bluetooth_le")),
                ("json_attributes_topic", .string(topic)),
                ("json_attributes_template", .string(HomeAssistantDiscovery.identityAttributesTemplate)),
            ], device: beaconDevice(beacon))
    }

    /// Distance and RSSI come from the sighting topic; the gateway publishes a sighting with both null when
    /// the beacon turns away (the sensor shows unknown), and `expire_after` covers a lost message.
    package func sensor(
        _ beacon: Beacon, quantity: String, name: String, deviceClass: String, unit: String,
        diagnostic: Bool
    ) -> ControlMessage {
        var members: [(String, JSONValue)] = [
            ("name", .string(gatewayName + " " + name)),
            ("unique_id", .string(uniqueID(beacon, quantity))),
            ("state_topic", .string(layout.sighting(beaconID: beacon.id))),
            ("value_template", .string("{{ value_json.\(quantity) }}")),
            ("device_class", .string(deviceClass)),
            ("unit_of_measurement", .string(unit)),
            ("state_class", .string("measurement")),
        ]
        if let sensorExpiry { members.append(("expire_after", .int(Int64(sensorExpiry)))) }
        if diagnostic { members.append(("entity_category", .string("diagnostic"))) }
        return message("sensor", object: objectID(beacon, quantity), members, device: beaconDevice(beacon))
    }

    func presenceSensor(_ beacon: Beacon) -> ControlMessage {
        message(
            "binary_sensor", object: objectID(beacon, "presence"),
            [
                ("name", .string(gatewayName + " presence")),
                ("unique_id", .string(uniqueID(beacon, "presence"))),
                ("state_topic", .string(layout.presence(beaconID: beacon.id))),
                ("value_template", .string(HomeAssistantDiscovery.presenceTemplate)),
                ("payload_on", .string("seen")),
                ("payload_off", .string("away")),
                ("device_class", .string("presence")),
            ], device: beaconDevice(beacon))
    }

    /// `inside` on, `outside` off, `unknown` (a region state snapshot before any decision) unknown.
    func regionSensor(_ beacon: Beacon, region: Region) -> ControlMessage {
        let suffix = "region_" + TopicLayout.slug(region.name)
        return message(
            "binary_sensor", object: objectID(beacon, suffix),
            [
                ("name", .string(gatewayName + " " + region.title)),
                ("unique_id", .string(uniqueID(beacon, suffix))),
                ("state_topic", .string(layout.region(region.name, beaconID: beacon.id))),
                ("value_template", .string(HomeAssistantDiscovery.stateTemplate(["inside", "outside"]))),
                ("payload_on", .string("inside")),
                ("payload_off", .string("outside")),
                ("device_class", .string("presence")),
            ], device: beaconDevice(beacon))
    }

    func gatewayBacklogSensor() -> ControlMessage {
        message(
            "sensor", object: "outbox_rows",
            [
                ("name", .string("Outbox backlog")),
                ("unique_id", .string(gatewayDeviceID + "_outbox_rows")),
                ("state_topic", .string(layout.telemetry)),
                ("value_template", .string("{{ value_json.counters.outbox_rows }}")),
                ("unit_of_measurement", .string("events")),
                ("icon", .string("mdi:tray-full")),
                ("state_class", .string("measurement")),
                ("entity_category", .string("diagnostic")),
            ], device: gatewayDevice())
    }

    /// The gateway's health, from its telemetry (issue 29: a gateway of a rooms site that hears nothing shows
    /// here before its rooms go wrong): reports per second, beacons tracked, and the time of the last advertising
    /// report (unknown before the first one).
    func gatewayHealthSensors() -> [ControlMessage] {
        func counter(_ object: String, _ name: String, unit: String, icon: String) -> ControlMessage {
            message(
                "sensor", object: object,
                [
                    ("name", .string(name)),
                    ("unique_id", .string(gatewayDeviceID + "_" + object)),
                    ("state_topic", .string(layout.telemetry)),
                    ("value_template", .string("{{ value_json.counters.\(object) }}")),
                    ("unit_of_measurement", .string(unit)),
                    ("icon", .string(icon)),
                    ("state_class", .string("measurement")),
                    ("entity_category", .string("diagnostic")),
                ], device: gatewayDevice())
        }
        return [
            counter("reports_per_second", "Reports per second", unit: "reports/s", icon: "mdi:access-point"),
            counter("tracked_beacons", "Beacons heard", unit: "beacons", icon: "mdi:bluetooth"),
            message(
                "sensor", object: "last_report",
                [
                    ("name", .string("Last report")),
                    ("unique_id", .string(gatewayDeviceID + "_last_report")),
                    ("state_topic", .string(layout.telemetry)),
                    ("value_template", .string(HomeAssistantDiscovery.lastReportTemplate)),
                    ("device_class", .string("timestamp")),
                    ("entity_category", .string("diagnostic")),
                ], device: gatewayDevice()),
        ]
    }

    /// The telemetry's time less `last_report_age_s` as an ISO 8601 UTC time; `None` (unknown) while the gateway
    /// has heard no report (age −1).
    static let lastReportTemplate =
        "{% set age = value_json.counters.last_report_age_s | int(-1) %}"
        + "{{ (value_json.time - age) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false) if age >= 0 else 'None' }}"

    func gatewayDevice() -> JSONValue {
        .object([
            ("identifiers", .array([.string(gatewayDeviceID)])),
            ("name", .string(gatewayName)),
            ("manufacturer", .string("BeaconBridge")),
            ("model", .string("BLE beacon gateway")),
            ("sw_version", .string(softwareVersion)),
        ])
    }

    /// No `via_device`: a beacon is heard by every gateway in range, not reached through one, and a shared
    /// device whose `via_device` named the last publisher would flip between gateways.
    func beaconDevice(_ beacon: Beacon) -> JSONValue {
        .object([
            ("identifiers", .array([.string(beaconDeviceID(beacon.id))])),
            ("name", .string(beacon.name)),
            ("manufacturer", .string("BeaconBridge")),
            ("model", .string(HomeAssistantDiscovery.model(ofBeaconID: beacon.id))),
        ])
    }

    private func objectID(_ beacon: Beacon, _ suffix: String) -> String { TopicLayout.slug(beacon.id) + "_" + suffix }

    private func uniqueID(_ beacon: Beacon, _ suffix: String) -> String {
        gatewayDeviceID + "_" + TopicLayout.slug(beacon.id) + "_" + suffix
    }

    package func message(
        _ component: String, object: String, _ members: [(String, JSONValue)],
        device: JSONValue
    ) -> ControlMessage {
        let common: [(String, JSONValue)] = [
            (
                "availability",
                .array([
                    .object([
                        ("topic", .string(layout.availability)),
                        ("payload_available", .string("online")),
                        ("payload_not_available", .string("offline")),
                    ])
                ])
            ),
            ("qos", .int(1)),
            ("device", device),
            (
                "origin",
                .object([
                    ("name", .string("BeaconBridge")),
                    ("sw_version", .string(softwareVersion)),
                ])
            ),
        ]
        return ControlMessage(
            topic: layout.discoveryConfig(component: component, objectID: object),
            payload: JSONValue.object(members + common).serialized, qos: 1, retain: true)
    }
}
