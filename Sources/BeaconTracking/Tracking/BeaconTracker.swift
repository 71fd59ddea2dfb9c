import BeaconModel

/// Per-beacon state keyed by beacon id, in slots linked in least-recently-seen order so the stalest beacon
/// is evicted in O(1) when `maxBeacons` is reached.
package struct BeaconTracker: Sendable {
    var slots: [TrackedBeacon] = []
    private var index: [String: Int32] = [:]
    private var free: [Int32] = []
    /// Most and least recently seen slots.
    private(set) var newest: Int32 = -1
    private(set) var oldest: Int32 = -1
    package var maxBeacons: Int
    package var counters = TrackerCounters()

    package init(maxBeacons: Int) {
        self.maxBeacons = maxBeacons
        index.reserveCapacity(min(maxBeacons, 1_024))
    }

    package var count: Int { index.count }

    package func slot(of beaconID: String) -> Int? { index[beaconID].map(Int.init) }

    /// Seen-order is kept to this granularity: a beacon already moved to the front less than this long ago (in
    /// capture time) is not relinked, which saves two cache misses on most reports. Eviction order is exact
    /// between beacons whose last reports are further apart than this.
    static let touchGranularity: Timestamp = 1

    /// The slot of `beaconID`, created when missing, and marks it seen at `time`. When the tracker is full the
    /// least recently seen beacon is removed first and returned as `evicted`.
    mutating func slot(
        for beaconID: String, at time: Timestamp,
        make: () -> TrackedBeacon
    ) -> (slot: Int, created: Bool, evicted: TrackedBeacon?) {
        if let existing = index[beaconID] {
            let slot = Int(existing)
            if !(time - slots[slot].touched < Self.touchGranularity) {
                slots[slot].touched = time
                touch(slot)
            }
            return (slot, false, nil)
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
