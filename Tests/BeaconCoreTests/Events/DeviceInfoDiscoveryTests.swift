import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import DeviceProtocols

/// Home Assistant sensors of a `gatt.devices` entry: one per field read, on the device's retained info topic,
/// battery as a % battery sensor, the revisions as diagnostic text sensors, one device by address via the gateway.
@Suite struct DeviceInfoDiscoveryTests {
    @Test func oneSensorPerFieldOnTheInfoTopic() throws {
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "hall")
        let discovery = HomeAssistantDiscovery(layout: layout, gatewayName: "Hall", softwareVersion: "1.0")
        let address = try #require(BluetoothAddress(string: "AA:BB:CC:DD:EE:01"))
        let device = GATTSettings.Device(address: address, name: "front-tag", read: [.battery, .firmware])
        let messages = discovery.deviceInfoMessages(device)
        #expect(
            messages.map(\.topic) == [
                "homeassistant/sensor/beaconbridge_hall/front_tag_battery/config",
                "homeassistant/sensor/beaconbridge_hall/front_tag_firmware/config",
            ])
        #expect(messages.allSatisfy { $0.retain && $0.qos == 1 })
        let battery = try JSONValue(parsing: messages[0].payload)
        #expect(battery["state_topic"] == .string("beaconbridge/hall/device/front-tag/info"))
        #expect(battery["value_template"] == .string("{{ value_json.battery | default(none) }}"))
        #expect(battery["device_class"] == .string("battery") && battery["unit_of_measurement"] == .string("%"))
        #expect(battery["unique_id"] == .string("beaconbridge_hall_front_tag_battery"))
        #expect(battery["device"]?["via_device"] == .string("beaconbridge_hall"))
        #expect(battery["device"]?["name"] == .string("Front tag"))
        let firmware = try JSONValue(parsing: messages[1].payload)
        #expect(firmware["entity_category"] == .string("diagnostic") && firmware["device_class"] == nil)
        #expect(firmware["device"] == battery["device"])
        #expect(firmware["value_template"] == .string("{{ value_json.firmware | default(this.state) }}"))
    }

    /// With a package (`firmware`), an update entity on the same device: state and command topics per device,
    /// `install` as the payload; its JSON state carries what Home Assistant reads.
    @Test func updateEntitySharesTheDevice() throws {
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "hall")
        let discovery = HomeAssistantDiscovery(layout: layout, gatewayName: "Hall", softwareVersion: "1.0")
        let address = try #require(BluetoothAddress(string: "AA:BB:CC:DD:EE:01"))
        let device = GATTSettings.Device(
            address: address, name: "front-tag", read: [.battery, .firmware], firmware: "/tmp/tag.zip")
        let messages = discovery.deviceInfoMessages(device)
        #expect(messages.map(\.topic).last == "homeassistant/update/beaconbridge_hall/front_tag_firmware_update/config")
        let update = try JSONValue(parsing: try #require(messages.last).payload)
        let battery = try JSONValue(parsing: messages[0].payload)
        #expect(update["device"] == battery["device"])
        #expect(update["state_topic"] == .string("beaconbridge/hall/device/front-tag/update"))
        #expect(update["command_topic"] == .string("beaconbridge/hall/command/update/front-tag"))
        #expect(update["payload_install"] == .string("install") && update["device_class"] == .string("firmware"))
        #expect(discovery.deviceInfoMessages(GATTSettings.Device(address: address, name: "x")).count == 3)
        let state = DeviceUpdateState(installedVersion: "1.2.3", latestVersion: "2", inProgress: true, percent: 40)
        #expect(
            state.payload
                == #"{"installed_version":"1.2.3","latest_version":"2","in_progress":true,"update_percentage":40}"#)
        #expect(DeviceUpdateState().payload == #"{"in_progress":false,"update_percentage":null}"#)
    }
}
