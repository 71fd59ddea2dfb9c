/// An attribute type or GATT UUID: 16-bit (a Bluetooth SIG assigned number on the Base UUID) or 128-bit.
///
/// A 128-bit UUID that lies on the Bluetooth Base UUID (`0000xxxx-0000-1000-8000-00805F9B34FB`) is normalised to
/// its 16-bit form, so `GATTUUID(littleEndian:)` of either wire form compares equal (Core spec Vol 3 Part B 2.5.1).
public enum GATTUUID: Sendable, Hashable, CustomStringConvertible {
    case uuid16(UInt16)
    /// Most and least significant 64 bits.
    case uuid128(high: UInt64, low: UInt64)

    static let baseHighLowBits: UInt64 = 0x0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// The primary service declaration type (0x2800).
    public static let primaryService = GATTUUID.uuid16(0x2800)
    /// The characteristic declaration type (0x2803).
    public static let characteristic = GATTUUID.uuid16(0x2803)
    /// The Client Characteristic Configuration descriptor (0x2902).
    public static let clientCharacteristicConfiguration = GATTUUID.uuid16(0x2902)

    /// A 128-bit UUID, normalised to 16 bits when it lies on the Base UUID.
    public init(high: UInt64, low: UInt64) {
        if low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLowBits, high >> 48 == 0 {
            self = .uuid16(UInt16(truncatingIfNeeded: high >> 32))
        } else {
            self = .uuid128(high: high, low: low)
        }
    }

    /// Reads 2 or 16 little-endian bytes; nil for any other length.
    public init?(littleEndian bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        switch array.count {
        case 2:
            self = .uuid16(UInt16(array[0]) | UInt16(array[1]) << 8)
        case 16:
            var low: UInt64 = 0
            var high: UInt64 = 0
            for index in stride(from: 7, through: 0, by: -1) { low = low << 8 | UInt64(array[index]) }
            for index in stride(from: 15, through: 8, by: -1) { high = high << 8 | UInt64(array[index]) }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// Parses "2a19", "0x2A19" or a dashed 128-bit UUID ("8ec90001-f315-4f60-9fb8-838830daea50").
    public init?(_ text: String) {
        var hex = Substring(text)
        if hex.hasPrefix("0x") || hex.hasPrefix("0X") { hex = hex.dropFirst(2) }
        if hex.count == 4, let value = UInt16(hex, radix: 16) {
            self = .uuid16(value)
            return
        }
        let digits = hex.filter { $0 != "-" }
        guard hex.count == 36, digits.count == 32,
            let high = UInt64(digits.prefix(16), radix: 16), let low = UInt64(digits.suffix(16), radix: 16)
        else { return nil }
        self.init(high: high, low: low)
    }

    /// The 128-bit value (16-bit UUIDs expanded on the Base UUID).
    public var full: (high: UInt64, low: UInt64) {
        switch self {
        case .uuid16(let short): return (UInt64(short) << 32 | Self.baseHighLowBits, Self.baseLow)
        case .uuid128(let high, let low): return (high, low)
        }
    }

    /// The wire form: 2 bytes for a 16-bit UUID, 16 otherwise, little endian.
    public var littleEndianBytes: [UInt8] {
        switch self {
        case .uuid16(let short):
            return [UInt8(truncatingIfNeeded: short), UInt8(truncatingIfNeeded: short >> 8)]
        case .uuid128(let high, let low):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(16)
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
            }
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
            }
            return bytes
        }
    }

    /// "2a19" for 16-bit UUIDs, the dashed lower-case form otherwise.
    public var description: String {
        switch self {
        case .uuid16(let short):
            let hex = String(short, radix: 16)
            return String(repeating: "0", count: 4 - hex.count) + hex
        case .uuid128(let high, let low):
            let text = Self.hex(high, digits: 16) + Self.hex(low, digits: 16)
            var dashed = ""
            for (index, character) in text.enumerated() {
                if index == 8 || index == 12 || index == 16 || index == 20 { dashed.append("-") }
                dashed.append(character)
            }
            return dashed
        }
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
