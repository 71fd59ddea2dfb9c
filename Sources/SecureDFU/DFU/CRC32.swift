/// CRC-32 as Nordic's Secure DFU computes it over objects (IEEE 802.3: reflected polynomial 0xEDB88320, initial
/// value and final XOR 0xFFFFFFFF; the same as zlib's `crc32`). Incremental: feed the running value back in.
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    /// The CRC of `bytes[range]` continuing from `crc` (0 for a fresh start).
    public static func checksum(_ bytes: [UInt8], _ range: Range<Int>? = nil, continuing crc: UInt32 = 0) -> UInt32 {
        let whole = 0..<bytes.count
        let span = (range ?? whole).clamped(to: whole)
        var value = ~crc
        for index in span { value = table[Int((value ^ UInt32(bytes[index])) & 0xFF)] ^ (value >> 8) }
        return ~value
    }
}
