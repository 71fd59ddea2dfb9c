import BeaconModel

/// Replay protection for encrypted sensor frames (BTHome): a frame whose `encryption_counter` is not newer than the
/// last one accepted from the same beacon is a duplicate, not a new reading, except a **counter restart**: a
/// counter below `restartBelow` (100) when the last one accepted is at least `restartBelow` higher. Devices start
/// counting again after a battery change (or wrap at 2^32); bthome-ble accepts any lower counter below 100 for the
/// same reason. Without this a device whose counter restarted would be refused until its counter passed the saved
/// one, i.e. for good. Stricter than bthome-ble: an equal counter, and a lower one within 100 of the last, stay
/// duplicates (so the frames just recorded from a device cannot be replayed); what remains open, as in
/// bthome-ble, is replaying one of a device's first 100 frames while its counter is far above them. Only frames that decrypted with a
/// configured key carry a counter, so the state is bounded by the number of keys. A pure value type owned by the
/// pipeline; the daemon saves the counters that changed (`takeChanges`) in its database and restores them at
/// start (`restore`), so a replayed frame stays a duplicate across a gateway restart.
public struct EncryptedCounterGuard: Sendable, Equatable {
    private var last: [String: Int64] = [:]
    /// Beacons whose counter changed since the last `takeChanges`.
    private var changed: Set<String> = []
    /// Frames dropped as replays.
    public private(set) var duplicates: UInt64 = 0
    /// Counter restarts accepted (a lower counter below `restartBelow`).
    public private(set) var restarts: UInt64 = 0
    /// A counter below this, `restartBelow` or more below the last one accepted, is a counter restart.
    public static let restartBelow: Int64 = 100

    public init() {}

    /// True when the observation is new (or carries no counter); records its counter.
    public mutating func admit(_ observation: Observation) -> Bool {
        // Most observations carry no fields (iBeacon, Eddystone-UID): no hashing for them.
        guard !observation.fields.isEmpty, case let .int(counter)? = observation.fields["encryption_counter"] else {
            return true
        }
        if let previous = last[observation.beaconID], counter <= previous {
            guard counter < Self.restartBelow, previous - counter >= Self.restartBelow else {
                duplicates += 1
                return false
            }
            restarts += 1
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
