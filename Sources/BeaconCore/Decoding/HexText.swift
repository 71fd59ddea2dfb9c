/// Fast lower-case hex and UUID rendering of byte ranges, one allocation per string.
enum HexText {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Hex digits of `bytes[range]` (reversed when `reversed`), optionally prefixed with "0x".
    static func hex(_ bytes: [UInt8], _ range: Range<Int>, reversed: Bool = false, prefix: Bool = false) -> String {
        let range = range.clamped(to: 0..<bytes.count)
        let count = range.count * 2 + (prefix ? 2 : 0)
        return String(unsafeUninitializedCapacity: count) { out in
            var position = 0
            if prefix { out[0] = UInt8(ascii: "0"); out[1] = UInt8(ascii: "x"); position = 2 }
            for step in 0..<range.count {
                let byte = bytes[reversed ? range.upperBound - 1 - step : range.lowerBound + step]
                out[position] = digits[Int(byte >> 4)]
                out[position + 1] = digits[Int(byte & 0x0F)]
                position += 2
            }
            return position
        }
    }

    /// A 16-byte range as a dashed UUID (8-4-4-4-12, lower case); "" when the range is not 16 bytes.
    static func uuid(_ bytes: [UInt8], _ range: Range<Int>, reversed: Bool = false) -> String {
        let range = range.clamped(to: 0..<bytes.count)
        guard range.count == 16 else { return "" }
        return String(unsafeUninitializedCapacity: 36) { out in
            var position = 0
            for step in 0..<16 {
                if step == 4 || step == 6 || step == 8 || step == 10 { out[position] = UInt8(ascii: "-"); position += 1 }
                let byte = bytes[reversed ? range.upperBound - 1 - step : range.lowerBound + step]
                out[position] = digits[Int(byte >> 4)]
                out[position + 1] = digits[Int(byte & 0x0F)]
                position += 2
            }
            return position
        }
    }

    /// Big-endian (or little-endian) unsigned integer of up to 8 bytes.
    @inline(__always)
    static func unsigned(_ bytes: [UInt8], _ range: Range<Int>, littleEndian: Bool = false) -> UInt64 {
        var value: UInt64 = 0
        if littleEndian {
            for index in range.reversed() where index >= 0 && index < bytes.count { value = value << 8 | UInt64(bytes[index]) }
        } else {
            for index in range where index >= 0 && index < bytes.count { value = value << 8 | UInt64(bytes[index]) }
        }
        return value
    }
}
