/// Replay protection for encrypted sensor frames (BTHome): a frame whose `encryption_counter` is not newer than the
/// last one accepted from the same beacon is a duplicate, not a new reading. Only frames that decrypted with a
/// configured key carry a counter, so the state is bounded by the number of keys. A pure value type owned by the
/// pipeline; the daemon saves the counters that changed (`takeChanges`) in its database and restores them at
/// start (`restore`), so a replayed frame stays a duplicate across a gateway restart.
public struct EncryptedCounterGuard: Sendable, Equatable {
    private var last: [String: Int64] = [:]
    /// Beacons whose counter changed since the last `takeChanges`.
    private var changed: Set<String> = []
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
        changed.insert(observation.beaconID)
        return true
    }

    /// Counters saved before (beacon id -> last accepted counter); a saved counter only ever raises the one in
    /// memory.
    public mutating func restore(_ counters: [String: Int64]) {
        for (beaconID, counter) in counters where counter > (last[beaconID] ?? .min) {
            last[beaconID] = counter
        }
    }

    /// The counters accepted since the last call (to save), beacon id -> counter.
    public mutating func takeChanges() -> [String: Int64] {
        guard !changed.isEmpty else { return [:] }
        var out: [String: Int64] = [:]
        for beaconID in changed { out[beaconID] = last[beaconID] }
        changed.removeAll(keepingCapacity: true)
        return out
    }
}
