import BeaconTracking

/// The RSSI of each beacon the status page lists, one sample a second for the last `samples` seconds, for the
/// page's small plots. Kept by the daemon's loop only while someone views the page (`StatusBoard.pageViewed`):
/// `record` is called with the listed rows once a second; a beacon no longer listed loses its ring, and
/// `clear()` frees everything when nobody looks. Bounded: at most `StatusBoard.beaconRows` rings of `samples`
/// bytes (200 x 180 B = 36 KB).
struct RSSIHistory {
    /// Seconds kept (3 minutes).
    static let samples = 180
    /// A second without a report (a gap in the plot).
    static let gap = Int8.min

    struct Ring {
        var values = [Int8](repeating: RSSIHistory.gap, count: RSSIHistory.samples)
        var next = 0
        var filled = 0

        mutating func append(_ value: Int8) {
            values[next] = value
            next = (next + 1) % values.count
            filled = min(filled + 1, values.count)
        }

        /// Oldest first, `filled` of them.
        var ordered: [Int8] {
            let start = (next - filled + values.count) % values.count
            return (0..<filled).map { values[(start + $0) % values.count] }
        }
    }

    private(set) var rings: [String: Ring] = [:]

    /// One sample per listed row: its last RSSI when it was heard in the last `period` seconds, else a gap.
    mutating func record(_ rows: [TrackedBeaconRow], period: Double = 1.5) {
        var next: [String: Ring] = [:]
        next.reserveCapacity(rows.count)
        for row in rows {
            var ring = rings[row.beaconID] ?? Ring()
            let heard = row.age < period ? row.rssi.map { Int8(clamping: max(-127, $0)) } : nil
            ring.append(heard ?? Self.gap)
            next[row.beaconID] = ring
        }
        rings = next
    }

    mutating func clear() { rings = [:] }

    /// A beacon's samples, oldest first (`gap` for a second without a report); empty when none.
    func series(of beaconID: String) -> [Int8] { rings[beaconID]?.ordered ?? [] }
}
