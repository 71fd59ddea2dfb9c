import Testing

@testable import BeaconEvents
@testable import BeaconModel

@Suite struct ESPresenseAndDiscoveryTests {
    func beacon(format: String, identifiers: [String]) -> BeaconSnapshot {
        BeaconSnapshot(
            beaconID: "x", format: format, identifiers: identifiers,
            address: BluetoothAddress(string: "AA:BB:CC:DD:EE:0F")!, name: nil, rssi: -70, smoothedRSSI: nil,
            distance: 4, measuredPower: nil, reportRate: 0, lastSeen: 0, fields: [:])
    }

    @Test(arguments: [
        (
            "ibeacon", ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "1", "2"],
            "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"
        ),
        ("altbeacon", ["0x0102", "3", "4"], "altBeacon:0x0102-3-4"),
        ("eddystone-uid", ["0x00112233445566778899", "0xAABBCCDDEEFF"], "eddy:00112233445566778899-aabbccddeeff"),
        ("eddystone-url", ["https://x"], "known:aabbccddee0f"),
        ("ibeacon", ["short"], "known:aabbccddee0f"),
    ])
    func espresenseIDs(format: String, identifiers: [String], expected: String) {
        #expect(ESPresenseMapping.deviceID(for: beacon(format: format, identifiers: identifiers)) == expected)
    }

    @Test func espresensePayloadOmitsUnknowns() {
        let payload = ESPresenseMapping.payload(for: beacon(format: "device", identifiers: []))
        #expect(
            payload.serialized == #"{"id":"known:aabbccddee0f","mac":"aabbccddee0f","rssi":-70,"raw":4,"distance":4}"#)
    }

    @Test func discoveryBuildsOneConfigPerEntity() throws {
        var settings = TopicSettings()
        settings.homeAssistant.enabled = true
        let discovery = HomeAssistantDiscovery(
            layout: TopicLayout(settings: settings, gatewayID: "GW"),
            gatewayName: "GW", softwareVersion: "1")
        let messages = discovery.messages(
            beacons: [.init(id: "mac:AA:BB", name: "Phone")], regions: [.init(name: "Office")])
        #expect(
            messages.map(\.topic) == [
                "homeassistant/sensor/beaconbridge_gw/outbox_rows/config",
                "homeassistant/sensor/beaconbridge_gw/reports_per_second/config",
                "homeassistant/sensor/beaconbridge_gw/tracked_beacons/config",
                "homeassistant/sensor/beaconbridge_gw/last_report/config",
                "homeassistant/device_tracker/beaconbridge_gw/mac_aa_bb_tracker/config",
                "homeassistant/sensor/beaconbridge_gw/mac_aa_bb_distance/config",
                "homeassistant/sensor/beaconbridge_gw/mac_aa_bb_rssi/config",
                "homeassistant/binary_sensor/beaconbridge_gw/mac_aa_bb_presence/config",
                "homeassistant/binary_sensor/beaconbridge_gw/mac_aa_bb_region_office/config",
            ])
        #expect(messages.allSatisfy { $0.retain && $0.qos == 1 })
        let lastReport = try JSONValue(parsing: messages[3].payload)
        #expect(lastReport["device_class"] == .string("timestamp"))
        #expect(lastReport["state_topic"] == .string("beaconbridge/GW/telemetry"))
        let region = try JSONValue(parsing: messages[8].payload)
        #expect(region["state_topic"] == .string("beaconbridge/GW/region/Office/mac:AA:BB"))
        #expect(region["device"]?["via_device"] == nil)
        #expect(region["name"] == .string("GW Office"))
    }
}
