import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct LayoutTests {
    func beacon(_ layout: BeaconLayout, _ payload: String) -> Beacon? {
        let bytes = DecodingFixtures.hex(payload)
        return layout.beacon(in: bytes, payload: 0..<bytes.count, address: TestFrames.address)
    }

    @Test func iBeaconLayoutOnManufacturerData() throws {
        let layout = try BeaconLayout(name: "ib", layout: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24")
        #expect(layout.adType == 0xFF)
        let found = try #require(beacon(layout, "4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"))
        #expect(found.beaconID == "ib:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        #expect(found.measuredPower == -59)
    }

    @Test func littleEndianIdentifiersAndData() throws {
        let layout = try BeaconLayout(name: "le", layout: "m:2-2=aa,i:3-4l,i:5-20l,i:21-23l,d:24-25l,d:26-26")
        let found = try #require(beacon(layout, "3412aa 3412 000102030405060708090a0b0c0d0e0f 010203 3412 ff"))
        #expect(found.identifiers == ["4660", "0f0e0d0c-0b0a-0908-0706-050403020100", "0x030201"])
        #expect(found.fields == ["data1": .int(0x1234), "data2": .int(255)])
        #expect(found.measuredPower == nil)
    }

    @Test func variableLengthIdentifierEndsAtThePDU() throws {
        let layout = try BeaconLayout(name: "url", layout: "s:0-1=feaa,m:2-2=10,p:3-3:-41,i:4-20v")
        #expect(layout.adType == 0x16)
        #expect(layout.serviceUUID == ServiceUUID(uuid16: 0xFEAA))
        let found = try #require(beacon(layout, "aafe10f0 01676f6f676c6500"))
        #expect(found.identifiers == ["0x01676f6f676c6500"])
        #expect(found.measuredPower == -16 - 41)
        #expect(beacon(layout, "aafe10f0") == nil)  // must start inside the PDU
    }

    @Test func identifierPastThePDUFailsTheMatch() throws {
        let layout = try BeaconLayout(name: "ib", layout: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24")
        #expect(beacon(layout, "4c000215e2c56db5dffb48d2b060d0f5a71096e0000100") == nil)
        #expect(beacon(layout, "4c000215e2c56db5dffb48d2b060d0f5a71096e000010002") == nil)  // power missing
        #expect(beacon(layout, "4c00") == nil)
    }

    @Test func missingDataFieldIsLeftOut() throws {
        let layout = try BeaconLayout(name: "alt", layout: "m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25")
        let found = try #require(beacon(layout, "1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c5"))
        #expect(found.fields.isEmpty)
        #expect(found.beaconID == "alt:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2")
    }

    @Test func fixedPowerAndServiceData128() throws {
        let layout = try BeaconLayout(
            name: "svc", layout: "s:0-15=0102030405060708090a0b0c0d0e0f10,p:-:-65,i:16-17,d:18-27")
        #expect(layout.adType == 0x21)
        let found = try #require(beacon(layout, "100f0e0d0c0b0a090807060504030201 beef 00112233445566778899"))
        #expect(found.identifiers == ["48879"])
        #expect(found.measuredPower == -65)
        #expect(found.fields == ["data1": .string("00112233445566778899")])
        #expect(beacon(layout, "0f0e0d0c0b0a09080706050403020100 beef") == nil)
    }

    @Test func extraFrameIsIdentifiedByAddress() throws {
        let layout = try BeaconLayout(name: "tlm", layout: "x,s:0-1=feaa,m:2-2=20,d:3-3,d:4-5,d:6-7,d:8-11,d:12-15")
        let found = try #require(beacon(layout, "aafe2000 0bb8 1780 000004d2 00003039"))
        #expect(found.beaconID == "tlm:C0:FF:EE:00:11:22")
        #expect(found.isExtraFrame)
        #expect(found.fields["data2"] == .int(3000))
    }

    @Test func multiBytePowerAndCorrection() throws {
        let layout = try BeaconLayout(name: "p", layout: "m:0-0=01,i:1-2,p:3-4:5")
        #expect(beacon(layout, "01 0001 ffc4")?.measuredPower == -60 + 5)
        let little = try BeaconLayout(name: "p", layout: "m:0-0=01,i:1-2,p:3-4l")
        #expect(beacon(little, "01 0001 c4ff")?.measuredPower == -60)
    }

    @Test(arguments: [
        ("", 1, ""),
        ("m:2-3=0215,i:4-19,q:1-2", 3, "q:1-2"),
        ("m:2-3=021,i:4-19", 1, "m:2-3=021"),
        ("m:2-3=02zz,i:4-19", 1, "m:2-3=02zz"),
        ("m:2-3=0215,i:19-4", 2, "i:19-4"),
        ("m:2-3=0215,i:4-x", 2, "i:4-x"),
        ("m:2-3=0215,i:4-19k", 2, "i:4-19k"),
        ("m:2-3=0215,i:4-300", 2, "i:4-300"),
        ("m:2-3=0215,,i:4-19", 2, ""),
        ("m:2-3=0215,i:4-19,p:24", 3, "p:24"),
        ("m:2-3=0215,i:4-19,p:-", 3, "p:-"),
        ("m:2-3=0215,i:4-19,p:1-1,p:2-2", 4, "p:2-2"),
        ("m:2-3=0215,i:4-19,p:1-1:-500", 3, "p:1-1:-500"),
        ("s:0-2=aabbcc,i:3-4", 1, "s:0-2=aabbcc"),
        ("s:1-2=feaa,i:3-4", 1, "s:1-2=feaa"),
        ("i:4-19,i:20-21", 2, "i:20-21"),
        ("m:2-3=0215", 1, "m:2-3=0215"),
        ("x,s:0-1=feaa,i:4-5", 3, "i:4-5"),
        ("m2-3=0215,i:4-19", 1, "m2-3=0215"),
    ])
    func badLayoutsNameTheTerm(layout: String, number: Int, term: String) {
        do {
            _ = try BeaconLayout(name: "bad", layout: layout)
            Issue.record("layout '\(layout)' was accepted")
        } catch {
            #expect(error.termNumber == number)
            #expect(error.term == term)
            #expect(!error.reason.isEmpty)
        }
    }

    @Test func whitespaceAroundTermsIsAccepted() throws {
        let layout = try BeaconLayout(name: "ib", layout: " m:2-3=0215, i:4-19 ,i:20-21,i:22-23,p:24-24 ")
        #expect(layout.identifiers.count == 3)
    }

    @Test func userLayoutRunsAfterBuiltins() throws {
        let custom = try BeaconLayout(name: "acme", layout: "m:0-1=9900,m:2-2=01,i:3-4,i:5-10,p:11-11")
        let decoder = BeaconDecoder(layouts: [custom])
        let report = AdvertisingReport(
            timestamp: 0, eventType: 0x10, isExtended: false, address: TestFrames.address,
            addressType: .publicDevice, rssi: -70, txPower: nil,
            data: DecodingFixtures.hex("0dff9900 01 0102 aabbccddeeff c8") + DecodingFixtures.hex(TestFrames.iBeacon))
        let beacons = decoder.decode(report).beacons
        #expect(
            beacons.map(\.beaconID) == ["acme:258:aabbccddeeff", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"])
    }
}

@Suite struct CanonicalIDTests {
    /// The id rendered straight from the bytes equals the id joined from the rendered identifiers.
    @Test(arguments: [
        ("m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", "4c000215e2c56db5dffb48d2b060d0f5a71096e0ffff0000c5"),
        ("m:0-0=01,i:1-1,i:2-3l,i:4-19l,i:20-30v", "01 ff 0900 000102030405060708090a0b0c0d0e0f 0a0b"),
        ("s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19", "aafe00ee00010203040506070809a0b0c0d0e0f0"),
    ])
    func idFromBytesMatchesJoinedIdentifiers(layout: String, payload: String) throws {
        let compiled = try BeaconLayout(name: "t", layout: layout)
        let bytes = DecodingFixtures.hex(payload)
        let beacon = try #require(compiled.beacon(in: bytes, payload: 0..<bytes.count, address: TestFrames.address))
        #expect(beacon.beaconID == Beacon.canonicalID(format: "t", identifiers: beacon.identifiers))
    }

    @Test func joinedIDDropsHexPrefixes() {
        #expect(Beacon.canonicalID(format: "f", identifiers: ["0xab", "12", "x0"]) == "f:ab:12:x0")
    }
}
