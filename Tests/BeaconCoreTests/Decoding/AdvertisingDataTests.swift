import Testing

@testable import BeaconFormats

@Suite struct AdvertisingDataTests {
    @Test func parsesEveryCommonStructure() {
        let data = AdvertisingData(
            DecodingFixtures.hex(
                """
                020106 0aff4c001005 0b1c7e2a8f 06094b69740000 03084b69 0303aafe 05036ffd9ffe 050478563412
                11071bc5d5a50200 a6870de511940100 f0a9 020ac4 0516aafe0102 0720efbeadde0a0b
                """))
        #expect(data.overrunOffset == nil)
        #expect(data.parsedEnd == data.bytes.count)
        #expect(data.flags == 0x06)
        #expect(data.txPowerLevel == -60)
        #expect(data.completeLocalName == "Kit")  // trailing NULs dropped
        #expect(data.shortenedLocalName == "Ki")
        #expect(data.localName == "Kit")
        #expect(
            data.serviceUUIDs.map(\.description) == [
                "feaa", "fd6f", "fe9f", "12345678", "a9f00001-9411-e50d-87a6-0002a5d5c51b",
            ])
        #expect(data.serviceData.map(\.uuid.description) == ["feaa", "deadbeef"])
        #expect(data.manufacturerData.map(\.companyID) == [0x004C])
    }

    @Test func lengthPastTheEndKeepsEarlierStructures() {
        let data = AdvertisingData(DecodingFixtures.hex("020106 0aff4c00 1005"))
        #expect(data.overrunOffset == 3)
        #expect(data.parsedEnd == 3)
        #expect(data.flags == 6)
        #expect(data.manufacturerData.isEmpty)
    }

    @Test func zeroLengthEndsTheSignificantPart() {
        let data = AdvertisingData(DecodingFixtures.hex("020106 00 0000 ffff"))
        #expect(data.overrunOffset == nil)
        #expect(data.parsedEnd == 3)
        #expect(Array(data.structures).count == 1)
    }

    @Test func shortOrOddStructuresAreIgnored() {
        let data = AdvertisingData(DecodingFixtures.hex("0101 01ff 0216aa 0403aafe6f 020a"))
        #expect(data.flags == nil)  // flags with no payload
        #expect(data.manufacturerData.isEmpty)
        #expect(data.serviceData.isEmpty)
        #expect(data.serviceUUIDs == [ServiceUUID(uuid16: 0xFEAA)])  // dangling odd byte dropped
        #expect(data.overrunOffset == 12)
        #expect(data.txPowerLevel == nil)
    }

    @Test func uuidRendering() {
        #expect(ServiceUUID(uuid16: 0x0A).description == "000a")
        #expect(ServiceUUID(uuid32: 0xFD6F).description == "0000fd6f")
        let bytes = Array(UInt8(0)..<16)
        #expect(ServiceUUID(littleEndian: bytes, 0..<16)?.description == "0f0e0d0c-0b0a-0908-0706-050403020100")
        #expect(ServiceUUID(littleEndian: bytes, 0..<3) == nil)
        #expect(ServiceUUID(littleEndian: bytes, 10..<20) == nil)
    }
}
