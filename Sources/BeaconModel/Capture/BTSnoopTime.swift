/// Conversion between btsnoop timestamps (microseconds since midnight, 1 January of year 0 AD) and Unix time.
public enum BTSnoopTime {
    /// Microseconds from year 0 AD to the Unix epoch, as defined by the btsnoop format.
    public static let unixEpochOffset: UInt64 = 0x00dc_ddb3_0f2f_8000

    /// Seconds since the Unix epoch; negative for timestamps before 1970 (some tools write 0).
    public static func unixSeconds(fromBTSnoop micros: UInt64) -> Timestamp {
        if micros >= unixEpochOffset { return Double(micros - unixEpochOffset) / 1_000_000 }
        return -Double(unixEpochOffset - micros) / 1_000_000
    }

    /// The btsnoop timestamp for a Unix time (clamped at year 0).
    public static func btsnoopMicros(fromUnixSeconds seconds: Timestamp) -> UInt64 {
        guard seconds.isFinite else { return unixEpochOffset }
        let micros = (seconds * 1_000_000).rounded()
        if micros >= 0 {
            let capped = min(micros, Double(UInt64.max - unixEpochOffset))
            return unixEpochOffset + UInt64(capped)
        }
        let below = min(-micros, Double(unixEpochOffset))
        return unixEpochOffset - UInt64(below)
    }
}
