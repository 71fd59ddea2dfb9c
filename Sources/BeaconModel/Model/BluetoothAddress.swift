/// A 48-bit Bluetooth device address.
///
/// `rawValue` holds the address with the most significant byte (the first one printed) in bits 40-47.
/// HCI carries addresses little endian: use `init(littleEndianBytes:)` for bytes straight off the wire.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// Builds an address from 6 bytes in HCI (little endian) order. Returns nil unless exactly 6 bytes.
    public init?<C: Collection>(littleEndianBytes bytes: C) where C.Element == UInt8 {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for (shift, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
        self.rawValue = value
    }

    /// Parses "AA:BB:CC:DD:EE:FF" (case-insensitive, ':' or '-' separators).
    public init?(string: String) {
        let parts = string.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.rawValue = value
    }

    /// The 6 bytes in HCI (little endian) order.
    public var littleEndianBytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) } }

    /// "AA:BB:CC:DD:EE:FF", upper case (one allocation: 17 bytes are above the inline small-string size).
    public var description: String {
        String(unsafeUninitializedCapacity: 17) { HexText.writeAddress(self, to: $0, at: 0) }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
