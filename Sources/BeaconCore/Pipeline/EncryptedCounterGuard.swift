/// Replay protection for encrypted sensor frames (BTHome): a frame whose `encryption_counter` is not newer than the
/// last one accepted from the same beacon is a duplicate, not a new reading. Only frames that decrypted with a
/// configured key carry a counter, so the state is bounded by the number of keys. A pure value type owned by the
/// pipeline; the counters live in memory (a restart accepts the next frame of each device again).
public struct EncryptedCounterGuard: Sendable, Equatable {
    private var last: [String: Int64] = [:]
    /// Frames dropped as replays.
    public private(set) var duplicates: UInt64 = 0

    public init() {}

    /// True when the observation is new (or carries no counter); records its counter.
    public mutating func admit(_ observation: Observation) -> Bool {
        guard case let .int(counter)? = observation.fields["encryption_counter"] else { return true }
        if let previous = last[observation.beaconID], counter <= previous {
            duplicates += 1
            return false
        }
        last[observation.beaconID] = counter
        return true
    }
}
