import Testing

@testable import BeaconFormats
@testable import BeaconModel

/// The decoder mistakes found by checking against peers' published test vectors (issue 14).
@Suite struct DecoderFixesTests {
    func report(_ hex: String, eventType: UInt16 = 0x10) -> AdvertisingReport {
        AdvertisingReport(
            timestamp: 5, eventType: eventType, isExtended: false, address: TestFrames.address,
            addressType: .randomDevice, rssi: -60, txPower: nil, data: DecodingFixtures.hex(hex))
    }

    @Test func eddystoneKeepsTheTransmittedPowerAtZeroMetres() throws {
        let uid = try #require(BeaconDecoder().decode(report(TestFrames.eddystoneUID)).beacons.first)
        #expect(uid.fields["tx_power_0m"] == .int(-18))
        #expect(uid.measuredPower == -18 - 41)
        let eid = try #require(BeaconDecoder().decode(report(TestFrames.eddystoneEID)).beacons.first)
        #expect(eid.fields["tx_power_0m"] == .int(-12))
        #expect(eid.measuredPower == -12 - 41)
        let url = try #require(BeaconDecoder().decode(report(TestFrames.eddystoneURL)).beacons.first)
        #expect(url.fields["tx_power_0m"] == .int(-16))
    }

    /// The same iBeacon body under company 0x0059 (Nordic) instead of Apple's 0x004C.
    static let iBeaconBodyUnderNordic = "020106 1aff5900 0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0002 c5"

    @Test func iBeaconOnlyUnderApplesCompanyID() throws {
        #expect(BeaconDecoder().decode(report(TestFrames.iBeacon)).beacons.map(\.format) == ["ibeacon"])
        #expect(BeaconDecoder().decode(report(Self.iBeaconBodyUnderNordic)).beacons.isEmpty)
        // A user layout can still match other companies (ABL's own iBeacon layout ignores the company code).
        let any = try BeaconLayout(name: "anyibeacon", layout: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24")
        let beacons = BeaconDecoder(layouts: [any]).decode(report(Self.iBeaconBodyUnderNordic)).beacons
        #expect(beacons.map(\.beaconID) == ["anyibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"])
    }

    @Test func userLayoutsAreTriedBeforeBuiltins() throws {
        let mine = try BeaconLayout(name: "office", layout: "m:0-3=4c000215,i:4-19,i:20-21,p:24-24")
        let beacons = BeaconDecoder(layouts: [mine]).decode(report(TestFrames.iBeacon)).beacons
        #expect(beacons.map(\.format) == ["office"])
        #expect(beacons.first?.identifiers == ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1"])
        // Where the user layout does not match, the built-in still does.
        let other = try BeaconLayout(name: "other", layout: "m:0-1=9900,i:2-3")
        #expect(BeaconDecoder(layouts: [other]).decode(report(TestFrames.iBeacon)).beacons.map(\.format) == ["ibeacon"])
    }

    @Test(arguments: [
        (UInt16(0x13), "adv_ind"), (0x15, "adv_direct_ind"), (0x12, "adv_scan_ind"), (0x10, "adv_nonconn_ind"),
        (0x1B, "scan_rsp"), (0x1A, "scan_rsp"), (0x00, "ext_nonconn"), (0x01, "ext_connectable"),
        (0x0A, "ext_scannable_scan_rsp"), (0x25, "ext_connectable_directed"),
    ])
    func eventTypeNames(eventType: UInt16, name: String) {
        let decoded = BeaconDecoder().decode(report(TestFrames.iBeacon, eventType: eventType))
        #expect(decoded.report.eventTypeName == name)
        #expect(decoded.json()["event_type_name"] == .string(name))
        #expect(decoded.json()["event_type"] == .int(Int64(eventType)))
    }

    @Test func gapURIStructure() throws {
        // 0x16 = "http:", then "//example.com".
        let data = AdvertisingData(DecodingFixtures.hex("020106 0f24 16 2f2f6578616d706c652e636f6d"))
        let uri = try #require(data.uri)
        #expect(uri.schemeCode == 0x16)
        #expect(uri.scheme == "http:")
        #expect(uri.uri == "http://example.com")
        #expect(
            data.json["uri"]
                == .object([
                    ("scheme_code", .int(0x16)), ("scheme", .string("http:")),
                    ("text", .string("//example.com")), ("uri", .string("http://example.com")),
                ]))
        // 0x01: no scheme prefix, the text is the whole URI.
        #expect(AdvertisingData(DecodingFixtures.hex("0424 01 6162")).uri?.uri == "ab")
        // A two-byte UTF-8 code point (U+0080) this build has no name for: code and text only.
        let unknown = try #require(AdvertisingData(DecodingFixtures.hex("0524 c280 7879")).uri)
        #expect(unknown.schemeCode == 0x80)
        #expect(unknown.scheme == nil && unknown.uri == nil && unknown.text == "xy")
        // Malformed: empty, a stray continuation byte, a truncated sequence.
        #expect(AdvertisingData(DecodingFixtures.hex("0124")).uri == nil)
        #expect(AdvertisingData(DecodingFixtures.hex("0324 8061")).uri == nil)
        #expect(AdvertisingData(DecodingFixtures.hex("0224 c2")).uri == nil)
    }
}
