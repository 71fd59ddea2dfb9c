import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct DecodedJSONTests {
    @Test func extendedReportJSON() throws {
        let report = try #require(try HCIEventParser.parse(TestFrames.extendedReport).first)
        let json = BeaconDecoder().decode(report).json()
        #expect(json["address"] == .string("C0:FF:EE:00:11:22"))
        #expect(json["extended"] == .bool(true))
        #expect(json["rssi"] == .int(-70))
        #expect(json["tx_power"] == nil)
        #expect(json["sid"] == .int(3))
        #expect(json["data_status"] == .int(0))
        #expect(
            json["ad"]?["service_data"]
                == .array([
                    .object([
                        ("uuid", .string("feaa")), ("data", .string("00ee000102030405060708090a0b0c0d0e0f0000")),
                    ])
                ]))
        guard case let .array(beacons)? = json["beacons"], let beacon = beacons.first else {
            Issue.record("no beacons in \(json.serialized)")
            return
        }
        #expect(beacon["id"] == .string("eddystone-uid:00010203040506070809:0a0b0c0d0e0f"))
        #expect(beacon["measured_power"] == .int(-18 - 41))
        #expect(json["device"] == nil)
    }

    @Test func deviceJSONAndUnavailableRSSI() throws {
        let report = AdvertisingReport(
            timestamp: 0, eventType: 0x1B, isExtended: false, address: TestFrames.address,
            addressType: .publicDevice, rssi: nil, txPower: nil,
            data: DecodingFixtures.hex(TestFrames.plainDevice) + [0x05, 0xFF])
        let json = BeaconDecoder().decode(report).json()
        #expect(json["rssi"] == .null)
        #expect(json["scan_response"] == .bool(true))
        #expect(json["ad"]?["name"] == .string("Kit"))
        #expect(json["ad"]?["overrun_offset"] == .int(18))
        #expect(
            json["device"]
                == .object([
                    ("id", .string("mac:C0:FF:EE:00:11:22")), ("manufacturer_id", .int(0x99)),
                    ("service_uuids", .string("fe9f")),
                ]))
        #expect(json.serialized.hasPrefix(#"{"address":"C0:FF:EE:00:11:22","address_type":"public","event_type":27"#))
    }
}
