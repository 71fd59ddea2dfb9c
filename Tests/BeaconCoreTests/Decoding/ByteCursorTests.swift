import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct ByteCursorTests {
    @Test func readsIntegersInBothByteOrders() throws {
        var cursor = ByteCursor([
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D,
            0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0xFF,
        ])
        #expect(try cursor.readUInt8() == 0x01)
        #expect(try cursor.readUInt16LE() == 0x0302)
        #expect(try cursor.readUInt16BE() == 0x0405)
        #expect(try cursor.readUInt32LE() == 0x0908_0706)
        #expect(try cursor.readUInt32BE() == 0x0A0B_0C0D)
        #expect(try cursor.readUInt64BE() == 0x0E0F_1011_1213_1415)
        #expect(try cursor.readInt8() == -1)
        #expect(cursor.isAtEnd)
    }

    @Test func failuresCarryTheOffsetAndLeaveTheCursor() throws {
        var cursor = ByteCursor([0xAA, 0xBB, 0xCC])
        try cursor.skip(2)
        #expect(throws: DecodeError(offset: 2, reason: "truncated 16-bit value: need 2 byte(s), 1 left")) {
            try cursor.readUInt16LE()
        }
        #expect(cursor.offset == 2)
        #expect(try cursor.readBytes(1) == [0xCC])
        #expect(throws: DecodeError.self) { try cursor.readUInt8("flags") }
        #expect(throws: DecodeError.self) { try cursor.readBytes(-1) }
        #expect(try cursor.readBytes(0) == [])
    }

    @Test func limitAndSubRange() throws {
        var cursor = ByteCursor([1, 2, 3, 4, 5, 6], range: 1..<5)
        #expect(cursor.offset == 1)
        #expect(cursor.remaining == 4)
        try cursor.limit(to: 2)
        #expect(try cursor.readRange(2) == 1..<3)
        #expect(throws: DecodeError.self) { try cursor.readUInt8() }
        #expect(throws: DecodeError.self) { try cursor.limit(to: 1) }
        let clamped = ByteCursor([1, 2], range: 1..<9)
        #expect(clamped.remaining == 1)
        #expect(DecodeError(offset: 3, reason: "x").description == "at byte 3: x")
    }
}

@Suite struct HexTextTests {
    @Test func addressRenderingMatchesTheContractType() {
        for raw: UInt64 in [0, 0x0102_03AB_CDEF, 0xFFFF_FFFF_FFFF, 0xA4C1_38BF_6FAB] {
            let address = BluetoothAddress(rawValue: raw)
            #expect(HexText.address(address) == address.description)
            #expect(
                Beacon.addressID(format: "eddystone-tlm", address: address) == "eddystone-tlm:" + address.description)
        }
    }

    @Test func decimalAndHex() {
        #expect(HexText.decimal(0) == "0")
        #expect(HexText.decimal(65535) == "65535")
        #expect(HexText.decimal(UInt64.max) == String(UInt64.max))
        #expect(HexText.hex([0x00, 0xAB, 0xFF], 0..<3, prefix: true) == "0x00abff")
        #expect(HexText.hex([0x00, 0xAB, 0xFF], 1..<9, reversed: true) == "ffab")
        #expect(HexText.uuid([UInt8](repeating: 1, count: 4), 0..<4) == "")
    }
}
