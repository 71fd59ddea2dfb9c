/// Counters of the tracker, for logs and metrics.
public struct TrackerCounters: Sendable, Equatable {
    /// Observations processed.
    public var observations: UInt64 = 0
    /// Observations without RSSI (HCI 127): counted as seen, kept out of the filters.
    public var rssiUnavailable: UInt64 = 0
    /// Observations older than the beacon's last one (their time was clamped forward).
    public var outOfOrder: UInt64 = 0
    /// Observations with a non-finite timestamp (dropped).
    public var invalidTime: UInt64 = 0
    /// Beacons that got a tracker entry.
    public var beaconsAdded: UInt64 = 0
    /// Beacons dropped because `max_beacons` was reached (least recently seen first).
    public var evictions: UInt64 = 0
    /// Beacons tracked now.
    public var tracked: Int = 0
    public init() {}
}
