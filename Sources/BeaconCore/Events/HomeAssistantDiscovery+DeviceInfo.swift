extension HomeAssistantDiscovery {
    /// Sensors of a device whose information the gateway reads (`gatt.devices`): battery (%), firmware and
    /// hardware revision, from the retained state on `<base>/device/<name>/info` (docs/gatt.md). One device per
    /// configured device, identified by its address, reached through this gateway (`via_device`).
    public func deviceInfoMessages(_ device: GATTSettings.Device) -> [ControlMessage] {
        let slug = TopicLayout.slug(device.name)
        let identity: JSONValue = .object([
            ("identifiers", .array([.string("beaconbridge_device_" + TopicLayout.slug(device.address.description))])),
            (
                "connections",
                .array([.array([.string("bluetooth"), .string(device.address.description.lowercased())])])
            ),
            ("name", .string(HomeAssistantDiscovery.title(device.name))),
            ("via_device", .string(gatewayDeviceID)),
        ])
        let topic = layout.deviceInfo(device.name)
        return device.read.map { field in
            var members: [(String, JSONValue)] = [
                ("name", .string(field == .battery ? "Battery" : field == .firmware ? "Firmware" : "Hardware")),
                ("unique_id", .string(gatewayDeviceID + "_" + slug + "_" + field.rawValue)),
                ("state_topic", .string(topic)),
                ("value_template", .string("{{ value_json.\(field.rawValue) }}")),
            ]
            if field == .battery {
                members += [
                    ("device_class", .string("battery")), ("unit_of_measurement", .string("%")),
                    ("state_class", .string("measurement")),
                ]
            } else {
                members.append(("entity_category", .string("diagnostic")))
            }
            return message("sensor", object: slug + "_" + field.rawValue, members, device: identity)
        }
    }
}
