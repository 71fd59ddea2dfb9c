import BeaconModel
import DeviceProtocols

extension HomeAssistantDiscovery {
    /// Sensors of a device whose information the gateway reads (`gatt.devices`): battery (%), firmware and
    /// hardware revision, from the retained state on `<base>/device/<name>/info` (docs/gatt.md); with a package
    /// (`firmware`), an `update` entity too. One device per configured device, identified by its address, reached
    /// through this gateway (`via_device`): the sensors and the update entity share it.
    public func deviceInfoMessages(_ device: GATTSettings.Device) -> [ControlMessage] {
        let slug = TopicLayout.slug(device.name)
        let identity = configuredDeviceIdentity(device)
        let topic = layout.deviceInfo(device.name)
        var messages = device.read.map { field in
            var members: [(String, JSONValue)] = [
                ("name", .string(field == .battery ? "Battery" : field == .firmware ? "Firmware" : "Hardware")),
                ("unique_id", .string(gatewayDeviceID + "_" + slug + "_" + field.rawValue)),
                ("state_topic", .string(topic)),
                // A field the device does not have is absent from the state: the battery is then unknown, a
                // revision keeps its value (`this.state`); Home Assistant logs a warning for a plain
                // `value_json.hardware` that is undefined (seen in the HA stage with the test peripheral).
                (
                    "value_template",
                    .string(
                        "{{ value_json.\(field.rawValue) | default(\(field == .battery ? "none" : "this.state")) }}")
                ),
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
        if device.firmware != nil {
            messages.append(updateEntity(device, identity: identity))
        }
        return messages
    }

    /// The `update` entity of a device with a package: its JSON state (`DeviceUpdateState`) on
    /// `<base>/device/<name>/update`, `install` on `<base>/command/update/<name>` starts the same Secure DFU
    /// update as the MQTT `dfu` command.
    func updateEntity(_ device: GATTSettings.Device, identity: JSONValue) -> ControlMessage {
        let slug = TopicLayout.slug(device.name)
        return message(
            "update", object: slug + "_firmware_update",
            [
                ("name", .string("Firmware update")),
                ("unique_id", .string(gatewayDeviceID + "_" + slug + "_firmware_update")),
                ("device_class", .string("firmware")), ("entity_category", .string("config")),
                ("state_topic", .string(layout.deviceUpdate(device.name))),
                ("command_topic", .string(layout.updateCommandBase + "/" + TopicLevel.safe(device.name))),
                ("payload_install", .string("install")),
                ("title", .string(HomeAssistantDiscovery.title(device.name) + " firmware")),
            ], device: identity)
    }

    /// The device block of a configured device (shared by its sensors and its update entity).
    func configuredDeviceIdentity(_ device: GATTSettings.Device) -> JSONValue {
        .object([
            ("identifiers", .array([.string("beaconbridge_device_" + TopicLayout.slug(device.address.description))])),
            (
                "connections",
                .array([.array([.string("bluetooth"), .string(device.address.description.lowercased())])])
            ),
            ("name", .string(HomeAssistantDiscovery.title(device.name))),
            ("via_device", .string(gatewayDeviceID)),
        ])
    }
}
