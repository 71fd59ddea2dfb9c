import BeaconModel

/// A Bluetooth service UUID of 16, 32 or 128 bits, as carried in AD structures (little endian on the wire).
public struct ServiceUUID: Sendable, Hashable, CustomStringConvertible {
    /// Size in bytes: 2, 4 or 16.
    public let size: Int
    /// The most significant 64 bits (128-bit UUIDs only).
    public let high: UInt64
    /// The least significant 64 bits, or the whole 16/32-bit value.
    public let low: UInt64

    public init(uuid16: UInt16) {
        size = 2
        high = 0
        low = UInt64(uuid16)
    }
    public init(uuid32: UInt32) {
        size = 4
        high = 0
        low = UInt64(uuid32)
    }
    public init(high: UInt64, low: UInt64) {
        size = 16
        self.high = high
        self.low = low
    }

    /// Reads `bytes[range]` (2, 4 or 16 bytes, little endian); nil for other sizes.
    public init?(littleEndian bytes: [UInt8], _ range: Range<Int>) {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        switch range.count {
        case 2, 4:
            size = range.count
            high = 0
            low = HexText.unsigned(bytes, range, littleEndian: true)
        case 16:
            size = 16
            low = HexText.unsigned(bytes, range.lowerBound..<(range.lowerBound + 8), littleEndian: true)
            high = HexText.unsigned(bytes, (range.lowerBound + 8)..<range.upperBound, littleEndian: true)
        default:
            return nil
        }
    }

    /// 16-bit: "fd6f"; 32-bit: "0000fd6f"; 128-bit: dashed lower-case UUID.
    public var description: String {
        switch size {
        case 2, 4:
            let hex = String(low, radix: 16)
            return String(repeating: "0", count: max(0, size * 2 - hex.count)) + hex
        default:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(16)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
            }
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
            }
            return HexText.uuid(bytes, 0..<16)
        }
    }
}
