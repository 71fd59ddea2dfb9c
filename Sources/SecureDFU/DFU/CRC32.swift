import CZlib

/// CRC-32 as Nordic's Secure DFU computes it over objects and as a `.zip` states it for its entries (IEEE 802.3:
/// reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF), which is zlib's. Incremental: feed the
/// running value back in. The corresponding C function is `crc32_z`.
public enum CRC32 {
    /// The CRC of `bytes[range]` continuing from `crc` (0 for a fresh start).
    public static func checksum(_ bytes: [UInt8], _ range: Range<Int>? = nil, continuing crc: UInt32 = 0) -> UInt32 {
        let whole = 0..<bytes.count
        let span = (range ?? whole).clamped(to: whole)
        // zlib answers a null buffer with its initial value, not `crc`: an empty span changes nothing.
        guard !span.isEmpty else { return crc }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return crc }
            return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base + span.lowerBound, span.count))
        }
    }
}
