import Testing

@testable import BeaconEvents
@testable import BeaconFormats
@testable import BeaconModel

/// Discovery configs for sensor readings: only the fields a device sent, with the registry's device class and unit.
@Suite struct SensorDiscoveryTests {
    var discovery: HomeAssistantDiscovery {
        var settings = TopicSettings()
        settings.homeAssistant.enabled = true
        return HomeAssistantDiscovery(
            layout: TopicLayout(settings: settings, gatewayID: "GW"), gatewayName: "GW",
            softwareVersion: "1")
    }

    func payload(_ message: ControlMessage) throws -> JSONValue { try JSONValue(parsing: message.payload) }

    @Test func readingsGetDeviceClassUnitAndStateClass() throws {
        let beacon = HomeAssistantDiscovery.Beacon(id: "govee:A4:C1:38:BF:6F:AB", name: "Kitchen")
        let messages = discovery.sensorMessages(
            beacon, format: .govee,
            fields: ["temperature_c", "humidity_pct", "battery_pct", "model"])
        #expect(
            messages.map(\.topic) == [
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
        let messages = discovery.sensorMessages(
            beacon, format: .bthome,
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

    func snapshot(_ id: String, format: String, _ fields: [String: FieldValue]) -> BeaconSnapshot {
        BeaconSnapshot(
            beaconID: id, format: format, identifiers: [], address: BluetoothAddress(rawValue: 1), name: nil,
            rssi: -60, smoothedRSSI: -60, distance: 1, measuredPower: nil, reportRate: 1, lastSeen: 0,
            fields: fields)
    }

    @Test func trackerAnnouncesOnlyNamedBeaconsAndOnlyNewEntityFields() throws {
        let govee = "govee:A4:C1:38:BF:6F:AB"
        var tracker = SensorFieldTracker(beacons: [KnownBeacon(id: govee, name: "Kitchen")])
        // Not named: nothing, however many readings.
        var grew = tracker.note(snapshot("govee:A4:C1:38:70:53:99", format: "govee", ["temperature_c": .double(20)]))
        #expect(!grew)
        // Information fields alone make no entity.
        grew = tracker.note(snapshot(govee, format: "govee", ["model": .string("H5075")]))
        #expect(!grew)
        #expect(tracker.messages(discovery).isEmpty)
        grew = tracker.note(
            snapshot(
                govee, format: "govee",
                [
                    "temperature_c": .double(20), "humidity_pct": .double(50),
                    "model": .string("H5075"),
                ]))
        #expect(grew)
        // The same fields again: nothing new to announce.
        grew = tracker.note(
            snapshot(govee, format: "govee", ["temperature_c": .double(21), "humidity_pct": .double(51)]))
        #expect(!grew)
        #expect(
            tracker.messages(discovery).map { $0.topic.split(separator: "/")[3] } == [
                "govee_a4_c1_38_bf_6f_ab_humidity_pct", "govee_a4_c1_38_bf_6f_ab_temperature_c",
            ])
        // A new reading grows the set; its config follows.
        grew = tracker.note(snapshot(govee, format: "govee", ["battery_pct": .int(80)]))
        #expect(grew)
        #expect(tracker.messages(discovery).count == 3)
        let temperature = try payload(try #require(tracker.messages(discovery).last))
        #expect(temperature["name"] == .string("GW temperature"))
        #expect(temperature["device"]?["name"] == .string("Kitchen"))
        // A reload that no longer names the beacon forgets it.
        tracker.setBeacons([])
        #expect(tracker.messages(discovery).isEmpty)
        grew = tracker.note(snapshot(govee, format: "govee", ["battery_pct": .int(80)]))
        #expect(!grew)
    }

    @Test func trackerBoundsTheFieldsOfOneBeacon() {
        let id = "bthome:54:48:E6:8F:80:A5"
        var tracker = SensorFieldTracker(beacons: [KnownBeacon(id: id, name: "Many")])
        var fields: [String: FieldValue] = [:]
        for index in 1...500 { fields["temperature_c_\(index)"] = .double(Double(index)) }
        let grew = tracker.note(snapshot(id, format: "bthome", fields))
        #expect(grew)
        #expect(tracker.seen[id]?.fields.count == SensorFieldTracker.maxFieldsPerBeacon)
    }

    @Test func entityNamesDropTheUnitWordAndKeepTheRepeatNumber() throws {
        let ruuvi = BeaconFormat.ruuvi
        let bthome = BeaconFormat.bthome
        #expect(
            HomeAssistantDiscovery.fieldLabel("temperature_c", field: try #require(ruuvi.field(named: "temperature_c")))
                == "temperature")
        #expect(
            HomeAssistantDiscovery.fieldLabel(
                "acceleration_x_ms2", field: try #require(ruuvi.field(named: "acceleration_x_ms2"))) == "acceleration x"
        )
        #expect(
            HomeAssistantDiscovery.fieldLabel(
                "movement_counter", field: try #require(ruuvi.field(named: "movement_counter"))) == "movement counter")
        #expect(
            HomeAssistantDiscovery.fieldLabel("button_2", field: try #require(bthome.field(named: "button_2")))
                == "button 2")
        #expect(
            HomeAssistantDiscovery.fieldLabel(
                "temperature_c_2", field: try #require(bthome.field(named: "temperature_c_2"))) == "temperature 2")
    }
}
