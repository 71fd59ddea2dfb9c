import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct FormatTests {
    let decoder = BeaconDecoder()

    func decode(_ hex: String, rssi: Int8? = -60) -> DecodedAdvertisement {
        decoder.decode(
            AdvertisingReport(
                timestamp: 5, eventType: 0x10, isExtended: false, address: TestFrames.address,
                addressType: .randomDevice, rssi: rssi, txPower: nil, data: DecodingFixtures.hex(hex)))
    }

    func only(_ hex: String) throws -> Beacon {
        let beacons = decode(hex).beacons
        #expect(beacons.count == 1)
        return try #require(beacons.first)
    }

    @Test func iBeacon() throws {
        let beacon = try only(TestFrames.iBeacon)
        #expect(beacon.format == "ibeacon")
        #expect(beacon.identifiers == ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1", "2"])
        #expect(beacon.beaconID == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        #expect(beacon.measuredPower == -59)
        #expect(beacon.fields.isEmpty)
    }

    @Test func altBeacon() throws {
        let beacon = try only(TestFrames.altBeacon)
        #expect(beacon.format == "altbeacon")
        #expect(beacon.beaconID == "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2")
        #expect(beacon.measuredPower == -59)
        #expect(beacon.fields == ["mfg_reserved": .int(0)])
    }

    @Test func eddystoneUID() throws {
        let beacon = try only(TestFrames.eddystoneUID)
        #expect(beacon.format == "eddystone-uid")
        #expect(beacon.identifiers == ["0x00010203040506070809", "0x0a0b0c0d0e0f"])
        #expect(beacon.beaconID == "eddystone-uid:00010203040506070809:0a0b0c0d0e0f")
        #expect(beacon.measuredPower == -18 - 41)
    }

    @Test func eddystoneURL() throws {
        let beacon = try only(TestFrames.eddystoneURL)
        #expect(beacon.format == "eddystone-url")
        #expect(beacon.beaconID == "eddystone-url:C0:FF:EE:00:11:22")
        #expect(beacon.fields["url"] == .string("https://www.google.com/"))
        #expect(beacon.measuredPower == -16 - 41)
    }

    @Test(arguments: [
        ("00 6578616d706c65 06", "http://www.example.gov/"),
        ("02 62 2d 07 0d 2e 66 6f 6f", "http://b-.com.gov.foo"),
        ("03 6162 08 2f 78 0a 04 05 0b 0c", "https://ab.org/x.net.info/.biz/.info.biz"),
    ])
    func urlExpansion(encoded: String, url: String) {
        let bytes = DecodingFixtures.hex(encoded)
        #expect(EddystoneURL.expand(bytes, 0..<bytes.count) == url)
    }

    @Test func urlWithReservedBytesOrSchemeIsNoBeacon() {
        #expect(EddystoneURL.expand([0x04, 0x61], 0..<2) == nil)
        #expect(EddystoneURL.expand([0x00, 0x20], 0..<2) == nil)
        #expect(EddystoneURL.expand([0x00, 0x80], 0..<2) == nil)
        #expect(decode("0816aafe10f0012000").beacons.isEmpty)
    }

    @Test func eddystoneTLMPlain() throws {
        let beacon = try only(TestFrames.eddystoneTLM)
        #expect(beacon.format == "eddystone-tlm")
        #expect(beacon.beaconID == "eddystone-tlm:C0:FF:EE:00:11:22")
        #expect(
            beacon.fields == [
                "battery_mv": .int(3000), "temperature_c": .double(23.5), "adv_count": .int(1234),
                "uptime_s": .double(1234.5), "encrypted": .bool(false), "tlm_version": .int(0),
            ])
        #expect(beacon.isExtraFrame)
    }

    @Test func eddystoneTLMNotSupportedAndNegative() throws {
        let unsupported = try only(TestFrames.eddystoneTLMUnsupported)
        #expect(unsupported.fields["battery_mv"] == nil)
        #expect(unsupported.fields["temperature_c"] == nil)
        #expect(unsupported.fields["uptime_s"] == .double(1))
        let negative = try only(TestFrames.eddystoneTLMNegative)
        #expect(negative.fields["temperature_c"] == .double(-1.5))
        #expect(negative.fields["battery_mv"] == .int(3600))
    }

    @Test func eddystoneTLMEncrypted() throws {
        let beacon = try only(TestFrames.eddystoneETLM)
        #expect(
            beacon.fields == [
                "encrypted": .bool(true), "tlm_version": .int(1), "etlm": .string("a1a2a3a4a5a6a7a8a9aaabac"),
                "salt": .string("5a17"), "mic": .string("c0de"),
            ])
        #expect(decode("0616aafe2002ffff").beacons.isEmpty)  // unknown TLM version
    }

    @Test func eddystoneFramesNeedTheEddystoneUUID() {
        // The same frames under service UUID 0x12AA are no Eddystone beacons.
        #expect(decode("1116aa12 20 00 0bb8 1780 000004d2 00003039").beacons.isEmpty)
        #expect(decode("0d16aa12 10 f0 01 676f6f676c65 00").beacons.isEmpty)
        #expect(decode("1716aa12 00 ee 00010203040506070809 0a0b0c0d0e0f 0000").beacons.isEmpty)
        #expect(decode("0d16aa12 30 f4 1122334455667788").beacons.isEmpty)
    }

    @Test func eddystoneEID() throws {
        let beacon = try only(TestFrames.eddystoneEID)
        #expect(beacon.format == "eddystone-eid")
        #expect(beacon.identifiers == ["0x1122334455667788"])
        #expect(beacon.beaconID == "eddystone-eid:1122334455667788")
        #expect(beacon.measuredPower == -12 - 41)
    }

    @Test func exposureNotification() throws {
        let beacon = try only(TestFrames.exposureNotification)
        #expect(beacon.format == "exposure-notification")
        #expect(beacon.beaconID == "exposure-notification:000102030405060708090a0b0c0d0e0f")
        #expect(beacon.fields == ["metadata": .string("40080000")])
        #expect(beacon.measuredPower == -59)
    }

    @Test func appleOverflow() throws {
        let beacon = try only(TestFrames.appleOverflow)
        #expect(beacon.format == "apple-overflow")
        #expect(beacon.beaconID == "apple-overflow:C0:FF:EE:00:11:22")
        #expect(beacon.fields["overflow_bits"] == .ints([0, 9, 127]))
    }

    @Test func appleContinuityNoiseIsADevice() throws {
        let decoded = decode(TestFrames.appleNearby)
        #expect(decoded.beacons.isEmpty)
        #expect(decoded.observations(includeDevices: false).isEmpty)
        let device = try #require(decoded.observations(includeDevices: true).first)
        #expect(device.beaconID == "mac:C0:FF:EE:00:11:22")
        #expect(device.format == "device")
        #expect(device.fields["manufacturer_id"] == .int(0x004C))
    }

    @Test func plainDeviceSighting() throws {
        let decoded = decode(TestFrames.plainDevice, rssi: nil)
        let device = try #require(decoded.observations(includeDevices: true).first)
        #expect(device.name == "Kit")
        #expect(device.rssi == nil)
        #expect(device.addressType == .randomDevice)
        #expect(device.fields == ["manufacturer_id": .int(0x0099), "service_uuids": .string("fe9f")])
    }

    @Test func observationsCarryReportData() throws {
        let decoded = decode("020106 05094b697421" + TestFrames.iBeacon.dropFirst(6))
        let observation = try #require(decoded.observations(includeDevices: true).first)
        #expect(observation.beaconID == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        #expect(observation.format == "ibeacon")
        #expect(observation.rssi == -60)
        #expect(observation.measuredPower == -59)
        #expect(observation.name == "Kit!")
        #expect(observation.timestamp == 5)
        #expect(observation.identifiers.count == 3)
        #expect(decoded.observations(includeDevices: true).count == 1)  // a beacon report is no extra device
    }

    @Test func twoBeaconsInOneReport() {
        let decoded = decode(TestFrames.iBeacon + TestFrames.eddystoneEID)
        #expect(decoded.beacons.map(\.format) == ["ibeacon", "eddystone-eid"])
        #expect(decoded.observations(includeDevices: false).count == 2)
    }

    @Test func disabledBuiltinsAreNotRecognised() {
        let only = BeaconDecoder(builtins: [.eddystoneUID])
        let report = AdvertisingReport(
            timestamp: 0, eventType: 0x10, isExtended: false, address: TestFrames.address,
            addressType: .publicDevice, rssi: nil, txPower: nil,
            data: DecodingFixtures.hex(TestFrames.iBeacon))
        #expect(only.decode(report).beacons.isEmpty)
    }

    @Test func builtinLayoutsAreExpressedInTheGrammar() throws {
        for format in FormatRegistry.builtins {
            guard let layout = format.layoutString else { continue }
            #expect(throws: Never.self) { try BeaconLayout(name: format.name, layout: layout) }
        }
    }
}
