import Testing
@testable import BeaconCore

/// Discovery configs for sensor readings: only the fields a device sent, with the registry's device class and unit.
@Suite struct SensorDiscoveryTests {
    var discovery: HomeAssistantDiscovery {
        var settings = TopicSettings()
        settings.homeAssistant.enabled = true
        return HomeAssistantDiscovery(layout: TopicLayout(settings: settings, gatewayID: "GW"), gatewayName: "GW",
                                      softwareVersion: "1")
    }

    func payload(_ message: ControlMessage) throws -> JSONValue { try JSONValue(parsing: message.payload) }

    @Test func readingsGetDeviceClassUnitAndStateClass() throws {
        let beacon = HomeAssistantDiscovery.Beacon(id: "govee:A4:C1:38:BF:6F:AB", name: "Kitchen")
        let messages = discovery.sensorMessages(beacon, format: .govee,
                                                fields: ["temperature_c", "humidity_pct", "battery_pct", "model"])
        #expect(messages.map(\.topic) == [
            "homeassistant/sensor/beaconbridge_gw/govee_a4_c1_38_bf_6f_ab_battery_pct/config",
            "homeassistant/sensor/beaconbridge_gw/govee_a4_c1_38_bf_6f_ab_humidity_pct/config",
            "homeassistant/sensor/beaconbridge_gw/govee_a4_c1_38_bf_6f_ab_temperature_c/config",
        ])
        let temperature = try payload(messages[2])
        #expect(temperature["device_class"] == .string("temperature"))
        #expect(temperature["unit_of_measurement"] == .string("°C"))
        #expect(temperature["state_class"] == .string("measurement"))
        #expect(temperature["value_template"] == .string("{{ value_json.fields.temperature_c }}"))
        #expect(temperature["state_topic"] == .string("beaconbridge/GW/sighting/govee:A4:C1:38:BF:6F:AB"))
        #expect(messages.allSatisfy { $0.retain && $0.qos == 1 })
    }

    @Test func binarySensorsAndButtonTriggers() throws {
        let beacon = HomeAssistantDiscovery.Beacon(id: "bthome:54:48:E6:8F:80:A5", name: "Door")
        let messages = discovery.sensorMessages(beacon, format: .bthome,
                                                fields: ["door", "motion", "window", "button_2", "energy_kwh", "packet_id"])
        let components = messages.map { $0.topic.split(separator: "/")[1] }
        #expect(components.filter { $0 == "binary_sensor" }.count == 3)
        #expect(components.filter { $0 == "device_automation" }.count == 8)  // the button's eight event types
        #expect(components.filter { $0 == "sensor" }.count == 1)  // energy; packet_id is information only
        let door = try payload(try #require(messages.first { $0.topic.contains("_door/") }))
        #expect(door["device_class"] == .string("door"))
        let press = try payload(try #require(messages.first { $0.topic.hasSuffix("button_2_press/config") }))
        #expect(press["automation_type"] == .string("trigger"))
        #expect(press["subtype"] == .string("button_2"))
        #expect(press["payload"] == .string("press"))
        let energy = try payload(try #require(messages.first { $0.topic.contains("energy_kwh") }))
        #expect(energy["state_class"] == .string("total_increasing"))
        #expect(energy["unit_of_measurement"] == .string("kWh"))
    }

    @Test func fieldsAFormatDoesNotDeclareGetNoEntity() {
        let beacon = HomeAssistantDiscovery.Beacon(id: "ruuvi:CB:B8:33:4C:88:4F", name: "Fridge")
        #expect(discovery.sensorMessages(beacon, format: .ruuvi, fields: ["unknown_thing", "mac", "sequence"]).isEmpty)
    }
}
