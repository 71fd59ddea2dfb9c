import BeaconModel

/// Apple's "overflow area": iOS apps advertising GATT services in the background put a 128-bit mask into
/// manufacturer data `4c 00 01 <16 bytes>`; each service UUID sets one bit (Apple's hash; bits can collide).
/// Bit positions count from the most significant bit of the first mask byte (position 0) to the least
/// significant bit of the last (127).
enum AppleOverflow {
    static let appleCompanyID: UInt16 = 0x004C
    static let overflowType: UInt8 = 0x01

    /// `bytes[payload]` is manufacturer data starting with the company code.
    package static func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
        let base = payload.lowerBound
        guard payload.count >= 19, bytes[base] == 0x4C, bytes[base + 1] == 0x00, bytes[base + 2] == overflowType
        else { return nil }
        let mask = (base + 3)..<(base + 19)
        var positions: [Int64] = []
        for (byteIndex, index) in mask.enumerated() {
            let byte = bytes[index]
            guard byte != 0 else { continue }
            for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 { positions.append(Int64(byteIndex * 8 + bit)) }
        }
        let format = "apple-overflow"
        return Beacon(
            format: format, beaconID: Beacon.addressID(format: format, address: address),
            identifiers: [], measuredPower: nil,
            fields: ["overflow_bits": .ints(positions), "overflow_mask": .string(HexText.hex(bytes, mask))],
            isExtraFrame: true)
    }
}

extension BeaconFormat {
    static let appleOverflow = BeaconFormat(
        name: "apple-overflow", summary: "Apple overflow area (iOS background service UUIDs)", idShape: .address,
        fields: [
            Field("overflow_bits", .info, "set bit positions, 0 = most significant bit of the first byte"),
            Field("overflow_mask", .info, "the 16-byte mask, hex"),
        ],
        syntheticFrame: "14ff4c00 01 80400000000000000000000000000001",
        quickCheck: QuickCheck(
            adType: 0xFF, offset1: 0, byte1: 0x4C, offset2: 2, byte2: AppleOverflow.overflowType, minimumLength: 19),
        decode: { AppleOverflow.beacon(in: $0.bytes, payload: $0.payload, address: $0.address) })
}
