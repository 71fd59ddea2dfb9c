/// The eviction rule shared by every outbox: while over a cap, drop the oldest expiring row (sightings go
/// first: stale RSSI is worth least), and only when none is left the oldest row of any kind.
public enum OutboxEviction {
    /// Which cap is exceeded, if any.
    public static func overflow(rows: Int, bytes: Int, maxRows: Int, maxBytes: Int) -> OutboxDropReason? {
        if rows > maxRows { return .rowCap }
        if bytes > maxBytes { return .byteCap }
        return nil
    }
}
