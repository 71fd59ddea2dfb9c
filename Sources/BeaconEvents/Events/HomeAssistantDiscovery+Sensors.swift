import BeaconFormats
import BeaconModel

/// Home Assistant discovery configs for the readings of sensor formats (Ruuvi, Govee, BTHome, Eddystone-TLM):
/// one entity per field a device has actually sent, described by its format's registry entry
/// (`BeaconFormat.fields`): readings become `sensor`s with `device_class`, `unit_of_measurement` and `state_class`,
/// on/off states `binary_sensor`s, button/dimmer/command events device triggers (`device_automation`), one per
/// event type. Information fields (counters, versions, raw bytes) get no entity. Every entity reads the beacon's
/// sighting topic (`fields.<name>`) and belongs to the beacon's device.
///
/// The daemon publishes these (retained) for the named beacons as their fields appear (`SensorFieldTracker`),
/// and again on every connect and Home Assistant birth.
extension HomeAssistantDiscovery {
    /// Event types per event field, for the device triggers.
    static let eventTypes: [String: [String]] = [
        "button": [
            "press", "double_press", "triple_press", "long_press", "long_double_press", "long_triple_press",
            "hold_press", "hold_release",
        ],
        "dimmer": ["rotate_left", "rotate_right"],
        "command": ["off", "on", "toggle", "step_up", "step_down"],
    ]
    /// Device classes whose values only grow (Home Assistant requires `total_increasing` for their statistics).
    static let increasingClasses: Set<String> = ["energy", "gas", "water"]

    /// The configs for `fields` (names as the beacon sent them, `_1`, `_2` numbering included) of `beacon`, a
    /// beacon of `format`. Fields the format does not declare, and information fields, give none.
    public func sensorMessages(_ beacon: Beacon, format: BeaconFormat, fields: [String]) -> [ControlMessage] {
        var out: [ControlMessage] = []
        let topic = layout.sighting(beaconID: beacon.id)
        for name in fields.sorted() {
            guard let field = format.field(named: name) else { continue }
            let object = TopicLayout.slug(beacon.id) + "_" + TopicLayout.slug(name)
            let unique = gatewayDeviceID + "_" + object
            let title = gatewayName + " " + Self.fieldLabel(name, field: field)
            switch field.kind {
            case let .reading(deviceClass):
                var members: [(String, JSONValue)] = [
                    ("name", .string(title)), ("unique_id", .string(unique)), ("state_topic", .string(topic)),
                    ("value_template", .string("{{ value_json.fields.\(name) }}")),
                ]
                if let deviceClass { members.append(("device_class", .string(deviceClass))) }
                if let unit = field.unit { members.append(("unit_of_measurement", .string(unit))) }
                let increasing = deviceClass.map { Self.increasingClasses.contains($0) } ?? false
                members.append(("state_class", .string(increasing ? "total_increasing" : "measurement")))
                out.append(sensorMessage("sensor", object: object, members, beacon: beacon))
            case let .binary(deviceClass):
                var members: [(String, JSONValue)] = [
                    ("name", .string(title)), ("unique_id", .string(unique)), ("state_topic", .string(topic)),
                    ("value_template", .string("{{ 'ON' if value_json.fields.\(name) else 'OFF' }}")),
                    ("payload_on", .string("ON")), ("payload_off", .string("OFF")),
                ]
                if let deviceClass { members.append(("device_class", .string(deviceClass))) }
                out.append(sensorMessage("binary_sensor", object: object, members, beacon: beacon))
            case .event:
                let base = field.name
                for type in Self.eventTypes[base] ?? [] {
                    out.append(
                        sensorMessage(
                            "device_automation", object: object + "_" + type,
                            [
                                ("automation_type", .string("trigger")),
                                ("topic", .string(topic)),
                                ("type", .string(type)),
                                ("subtype", .string(name)),
                                // Most sightings carry no event: `get` renders nothing for them, without a template warning.
                                ("value_template", .string("{{ value_json.fields.get('\(name)', '') }}")),
                                ("payload", .string(type)),
                            ], beacon: beacon, entity: false))
                }
            case .info:
                continue
            }
        }
        return out
    }

    /// The entity name's field part: the field's words without a trailing unit word (`temperature_c` ->
    /// `temperature`, `acceleration_x_ms2` -> `acceleration x`), then its repeat number (`button_2` -> `button 2`).
    static func fieldLabel(_ name: String, field: BeaconFormat.Field) -> String {
        var words = field.name.split(separator: "_").map(String.init)
        if field.unit != nil, words.count > 1 { words.removeLast() }
        let suffix =
            name.hasPrefix(field.name) ? name.dropFirst(field.name.count).split(separator: "_").map(String.init) : []
        return (words + suffix).joined(separator: " ")
    }

    private func sensorMessage(
        _ component: String, object: String, _ members: [(String, JSONValue)],
        beacon: Beacon, entity: Bool = true
    ) -> ControlMessage {
        var all = members
        if entity {
            all.append(
                (
                    "availability",
                    .array([
                        .object([
                            ("topic", .string(layout.availability)),
                            ("payload_available", .string("online")),
                            ("payload_not_available", .string("offline")),
                        ])
                    ])
                ))
            all.append(("qos", .int(1)))
        }
        all.append(("device", beaconDevice(beacon)))
        all.append(("origin", .object([("name", .string("BeaconBridge")), ("sw_version", .string(softwareVersion))])))
        return ControlMessage(
            topic: layout.discoveryConfig(component: component, objectID: object),
            payload: JSONValue.object(all).serialized, qos: 1, retain: true)
    }
}
