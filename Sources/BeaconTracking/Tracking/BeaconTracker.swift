import BeaconModel

/// Per-beacon state keyed by beacon id, in slots linked in least-recently-seen order so the stalest beacon
/// is evicted in O(1) when `maxBeacons` is reached.
///
/// A caller that sees the same beacon again and again (the pipeline, through its repeat cache) can keep the
/// `TrackerHandle` of its slot and pass it back, which finds the slot without hashing the id (issue 45).
package struct BeaconTracker: Sendable {
    var slots: [TrackedBeacon] = []
    /// Per slot: how many times it was emptied. A handle names a slot and its generation, so one taken before the
    /// beacon was evicted (or before the slot was given to another beacon) no longer matches.
    private var generations: [UInt32] = []
    private var index: [String: Int32] = [:]
    private var free: [Int32] = []
    /// Most and least recently seen slots.
    private(set) var newest: Int32 = -1
    private(set) var oldest: Int32 = -1
    package var maxBeacons: Int
    package var counters = TrackerCounters()
    /// Calls of `slot(for:hint:at:make:)` that looked the id up (no hint, or one that no longer matched); for tests.
    private(set) var lookupsByID: UInt64 = 0

    package init(maxBeacons: Int) {
        self.maxBeacons = maxBeacons
        index.reserveCapacity(min(maxBeacons, 1_024))
    }

    package var count: Int { index.count }

    package func slot(of beaconID: String) -> Int? { index[beaconID].map(Int.init) }

    /// The handle of a slot in use, to pass back to `slot(for:hint:at:make:)`.
    func handle(of slot: Int) -> TrackerHandle {
        TrackerHandle(slot: Int32(slot), generation: generations[slot])
    }

    /// The slot `handle` names, if it still holds `beaconID`: same generation (not emptied since) and the same id.
    /// The id comparison (no hash) keeps a handle from anywhere else (another tracker, a stale cache) harmless:
    /// the worst it can do is miss, and the caller falls back to the lookup by id.
    func slot(of handle: TrackerHandle, holding beaconID: String) -> Int? {
        let slot = Int(handle.slot)
        guard slot >= 0, slot < slots.count, generations[slot] == handle.generation,
            slots[slot].beaconID == beaconID
        else { return nil }
        return slot
    }

    /// Seen-order is kept to this granularity: a beacon already moved to the front less than this long ago (in
    /// capture time) is not relinked, which saves two cache misses on most reports. Eviction order is exact
    /// between beacons whose last reports are further apart than this.
    static let touchGranularity: Timestamp = 1

    /// The slot of `beaconID`, created when missing, and marks it seen at `time`. When the tracker is full the
    /// least recently seen beacon is removed first and returned as `evicted`. `hint`: the handle of the beacon's
    /// slot from an earlier call (`handle(of:)`), if the caller kept one; when it still holds `beaconID` the id is
    /// not hashed, otherwise the lookup by id decides as without it.
    mutating func slot(
        for beaconID: String, hint: TrackerHandle = .none, at time: Timestamp,
        make: () -> TrackedBeacon
    ) -> (slot: Int, created: Bool, evicted: TrackedBeacon?) {
        var existing = self.slot(of: hint, holding: beaconID)
        if existing == nil {
            lookupsByID &+= 1
            existing = index[beaconID].map(Int.init)
        }
        if let existing {
            if !(time - slots[existing].touched < Self.touchGranularity) {
                slots[existing].touched = time
                touch(existing)
            }
            return (existing, false, nil)
        }
        var evicted: TrackedBeacon?
        if index.count >= maxBeacons, oldest >= 0 {
            evicted = remove(slot: Int(oldest))
            counters.evictions += 1
        }
        let beacon = make()
        let slot: Int
        if let reused = free.popLast() {
            slot = Int(reused)
            slots[slot] = beacon
        } else {
            slot = slots.count
            if slots.count == slots.capacity {
                // Double, but never past the cap: a full tracker holds exactly `maxBeacons` slots.
                slots.reserveCapacity(min(maxBeacons, max(16, slots.capacity * 2)))
            }
            slots.append(beacon)
            generations.append(0)
        }
        index[beaconID] = Int32(slot)
        slots[slot].touched = time
        linkNewest(slot)
        counters.beaconsAdded += 1
        counters.tracked = index.count
        return (slot, true, evicted)
    }

    /// Removes the least recently seen beacon.
    mutating func evictOldest() -> TrackedBeacon? {
        guard oldest >= 0 else { return nil }
        counters.evictions += 1
        return remove(slot: Int(oldest))
    }

    mutating func remove(slot: Int) -> TrackedBeacon {
        unlink(slot)
        let beacon = slots[slot]
        index[beacon.beaconID] = nil
        slots[slot] = TrackedBeacon(beaconID: "", filter: .kalman(estimate: .nan, covariance: 0), now: 0)
        generations[slot] &+= 1
        free.append(Int32(slot))
        counters.tracked = index.count
        return beacon
    }

    /// Marks a slot most recently seen.
    mutating func touch(_ slot: Int) {
        guard newest != Int32(slot) else { return }
        unlink(slot)
        linkNewest(slot)
    }

    /// Slots in use, most recently seen first.
    var liveSlots: [Int] {
        var result: [Int] = []
        result.reserveCapacity(index.count)
        var cursor = newest
        while cursor >= 0 {
            result.append(Int(cursor))
            cursor = slots[Int(cursor)].older
        }
        return result
    }

    private mutating func linkNewest(_ slot: Int) {
        slots[slot].newer = -1
        slots[slot].older = newest
        if newest >= 0 { slots[Int(newest)].newer = Int32(slot) }
        newest = Int32(slot)
        if oldest < 0 { oldest = Int32(slot) }
    }

    private mutating func unlink(_ slot: Int) {
        let newer = slots[slot].newer
        let older = slots[slot].older
        if newer >= 0 { slots[Int(newer)].older = older } else { newest = older }
        if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }
}

/// A beacon's slot in a `BeaconTracker` and the slot's generation: finds the slot again without hashing the beacon
/// id, for as long as the beacon stays tracked (`BeaconTracker.slot(of:holding:)`).
package struct TrackerHandle: Sendable, Equatable {
    package var slot: Int32
    package var generation: UInt32
    /// Names no slot.
    package static let none = TrackerHandle(slot: -1, generation: 0)
}
