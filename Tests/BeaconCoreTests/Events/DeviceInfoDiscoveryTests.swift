import Testing

@testable import BeaconCore

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
        #expect(battery["value_template"] == .string("{{ value_json.battery }}"))
        #expect(battery["device_class"] == .string("battery") && battery["unit_of_measurement"] == .string("%"))
        #expect(battery["unique_id"] == .string("beaconbridge_hall_front_tag_battery"))
        #expect(battery["device"]?["via_device"] == .string("beaconbridge_hall"))
        #expect(battery["device"]?["name"] == .string("Front tag"))
        let firmware = try JSONValue(parsing: messages[1].payload)
        #expect(firmware["entity_category"] == .string("diagnostic") && firmware["device_class"] == nil)
        #expect(firmware["device"] == battery["device"])
    }
}
