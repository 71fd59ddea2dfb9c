/// Fast lower-case hex, UUID and decimal rendering of byte ranges, one allocation per string. The writers put
/// text into a caller's buffer and return the next position; they never write past the buffer.
public enum HexText {
    /// Lower-case hex of all the bytes ("" for none).
    public static func hex(_ bytes: [UInt8]) -> String { hex(bytes, 0..<bytes.count) }

    /// The two hex digits of one byte (lower case unless `uppercase`).
    public static func hex(byte: UInt8, uppercase: Bool = false) -> String {
        String(unsafeUninitializedCapacity: 2) { out in
            out[0] = uppercase ? upperDigit(byte >> 4) : digit(byte >> 4)
            out[1] = uppercase ? upperDigit(byte & 0x0F) : digit(byte & 0x0F)
            return 2
        }
    }

    /// ASCII of a lower-case hex digit (0-15).
    @inline(__always)
    package static func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    @inline(__always)
    static func upperDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x37 + nibble }

    /// "AA:BB:CC:DD:EE:FF" (upper case, like `BluetoothAddress.description`) in one allocation.
    package static func address(_ address: BluetoothAddress) -> String {
        String(unsafeUninitializedCapacity: 17) { out in writeAddress(address, to: out, at: 0) }
    }

    /// Writes the 17 characters of an address (nothing when they do not fit).
    package static func writeAddress(
        _ address: BluetoothAddress, to out: UnsafeMutableBufferPointer<UInt8>, at start: Int
    )
        -> Int
    {
        guard start + 17 <= out.count else { return start }
        var position = start
        for index in stride(from: 5, through: 0, by: -1) {
            let byte = UInt8(truncatingIfNeeded: address.rawValue >> UInt64(8 * index))
            out[position] = upperDigit(byte >> 4)
            out[position + 1] = upperDigit(byte & 0x0F)
            position += 2
            if index > 0 {
                out[position] = UInt8(ascii: ":")
                position += 1
            }
        }
        return position
    }

    /// Hex digits of `bytes[range]` (reversed when `reversed`), optionally prefixed with "0x".
    package static func hex(_ bytes: [UInt8], _ range: Range<Int>, reversed: Bool = false, prefix: Bool = false)
        -> String
    {
        let range = range.clamped(to: 0..<bytes.count)
        return String(unsafeUninitializedCapacity: range.count * 2 + (prefix ? 2 : 0)) { out in
            var position = 0
            if prefix {
                out[0] = UInt8(ascii: "0")
                out[1] = UInt8(ascii: "x")
                position = 2
            }
            return writeHex(bytes, range, reversed: reversed, to: out, at: position)
        }
    }

    /// A 16-byte range as a dashed UUID (8-4-4-4-12, lower case); "" when the range is not 16 bytes.
    package static func uuid(_ bytes: [UInt8], _ range: Range<Int>, reversed: Bool = false) -> String {
        let range = range.clamped(to: 0..<bytes.count)
        guard range.count == 16 else { return "" }
        return String(unsafeUninitializedCapacity: 36) { out in
            writeUUID(bytes, range, reversed: reversed, to: out, at: 0)
        }
    }

    @inline(__always)
    package static func writeHex(
        _ bytes: [UInt8], _ range: Range<Int>, reversed: Bool,
        to out: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int {
        var position = start
        let range = range.clamped(to: 0..<bytes.count)
        for step in 0..<range.count where position + 1 < out.count {
            let byte = bytes[reversed ? range.upperBound - 1 - step : range.lowerBound + step]
            out[position] = digit(byte >> 4)
            out[position + 1] = digit(byte & 0x0F)
            position += 2
        }
        return position
    }

    @inline(__always)
    package static func writeUUID(
        _ bytes: [UInt8], _ range: Range<Int>, reversed: Bool,
        to out: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int {
        var position = start
        let range = range.clamped(to: 0..<bytes.count)
        guard range.count == 16, start + 36 <= out.count else { return start }
        for step in 0..<16 {
            if step == 4 || step == 6 || step == 8 || step == 10 {
                out[position] = UInt8(ascii: "-")
                position += 1
            }
            let byte = bytes[reversed ? range.upperBound - 1 - step : range.lowerBound + step]
            out[position] = digit(byte >> 4)
            out[position + 1] = digit(byte & 0x0F)
            position += 2
        }
        return position
    }

    /// Decimal text of `value` (up to 15 digits stay a small string, no allocation).
    package static func decimal(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: decimalLength(value)) { out in writeDecimal(value, to: out, at: 0) }
    }

    package static func decimalLength(_ value: UInt64) -> Int {
        var length = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            length += 1
        }
        return length
    }

    @inline(__always)
    package static func writeDecimal(_ value: UInt64, to out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let end = start + decimalLength(value)
        guard end <= out.count else { return start }
        var rest = value
        var position = end
        repeat {
            position -= 1
            out[position] = 0x30 + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        return end
    }

    /// Big-endian (or little-endian) unsigned integer of up to 8 bytes.
    @inline(__always)
    package static func unsigned(_ bytes: [UInt8], _ range: Range<Int>, littleEndian: Bool = false) -> UInt64 {
        var value: UInt64 = 0
        if littleEndian {
            for index in range.reversed() where index >= 0 && index < bytes.count {
                value = value << 8 | UInt64(bytes[index])
            }
        } else {
            for index in range where index >= 0 && index < bytes.count { value = value << 8 | UInt64(bytes[index]) }
        }
        return value
    }
}
