/// One generation of the `RepeatDecodeCache`: an open-addressed table (linear probing) found by the key's 64-bit
/// fingerprint, with no `Hasher` round (issue 45). The full key is compared only where a slot's fingerprint
/// matches. At most half full (it doubles before), so a probe always reaches an empty slot; entries are removed
/// only from the previous generation, which takes no inserts, so the removed slots it keeps (probing goes on past
/// them) are bounded by its size and gone when the table is cleared.
struct RepeatDecodeTable: Sendable {
    private struct Item: Sendable {
        let key: RepeatDecodeCache.Key
        var entry: RepeatDecodeCache.Entry
    }

    /// Per slot: `empty`, `removed`, or the fingerprint of the key there (a fingerprint of 0 or 1 is kept as 2:
    /// the tag only says where to compare keys). Empty (no slots) until the first insert.
    private var tags: [UInt64] = []
    private var items: [Item?] = []
    private static let empty: UInt64 = 0
    private static let removed: UInt64 = 1
    /// Entries held.
    private(set) var count = 0
    /// Slots not empty (entries and removed ones).
    private var used = 0

    private static func tag(of key: RepeatDecodeCache.Key) -> UInt64 { max(key.fingerprint, 2) }

    /// The slot holding `key`, or nil.
    func find(_ key: RepeatDecodeCache.Key) -> Int? {
        guard !tags.isEmpty else { return nil }
        let tag = Self.tag(of: key)
        let mask = tags.count - 1
        var slot = Int(truncatingIfNeeded: key.fingerprint) & mask
        while true {
            let found = tags[slot]
            if found == Self.empty { return nil }
            if found == tag, let item = items[slot], item.key == key { return slot }
            slot = (slot + 1) & mask
        }
    }

    func entry(at slot: Int) -> RepeatDecodeCache.Entry {
        guard let item = items[slot] else { preconditionFailure("no entry at slot \(slot)") }
        return item.entry
    }

    func handle(at slot: Int, observation: Int) -> TrackerHandle {
        guard let handles = items[slot]?.entry.handles, observation < handles.count else { return .none }
        return handles[observation]
    }

    mutating func setHandle(_ handle: TrackerHandle, at slot: Int, observation: Int) {
        guard let observations = items[slot]?.entry.observations.count, observation < observations else { return }
        if items[slot]?.entry.handles.count != observations {
            items[slot]?.entry.handles = Array(repeating: .none, count: observations)
        }
        items[slot]?.entry.handles[observation] = handle
    }

    mutating func replace(_ entry: RepeatDecodeCache.Entry, at slot: Int) {
        precondition(items[slot] != nil, "no entry at slot \(slot)")
        items[slot]?.entry = entry
    }

    /// Adds `key`, which the table does not hold; returns its slot.
    mutating func insert(_ entry: RepeatDecodeCache.Entry, for key: RepeatDecodeCache.Key) -> Int {
        if (used + 1) * 2 > tags.count { grow() }
        let slot = emptySlot(for: key.fingerprint)
        tags[slot] = Self.tag(of: key)
        items[slot] = Item(key: key, entry: entry)
        count += 1
        used += 1
        return slot
    }

    /// Takes the entry out of `slot` (which stays `removed`, so probes for keys placed after it go on).
    mutating func remove(at slot: Int) -> RepeatDecodeCache.Entry {
        guard let item = items[slot] else { preconditionFailure("no entry at slot \(slot)") }
        tags[slot] = Self.removed
        items[slot] = nil
        count -= 1
        return item.entry
    }

    mutating func removeAll(keepingCapacity: Bool) {
        guard keepingCapacity else {
            self = RepeatDecodeTable()
            return
        }
        for slot in tags.indices where tags[slot] != Self.empty {
            tags[slot] = Self.empty
            items[slot] = nil
        }
        count = 0
        used = 0
    }

    private func emptySlot(for fingerprint: UInt64) -> Int {
        let mask = tags.count - 1
        var slot = Int(truncatingIfNeeded: fingerprint) & mask
        while tags[slot] != Self.empty { slot = (slot + 1) & mask }
        return slot
    }

    /// Twice the slots (16 at first), the entries placed again and removed slots dropped.
    private mutating func grow() {
        let oldTags = tags
        let oldItems = items
        tags = Array(repeating: Self.empty, count: max(16, tags.count * 2))
        items = Array(repeating: nil, count: tags.count)
        used = count
        for (slot, tag) in oldTags.enumerated() where tag > Self.removed {
            guard let item = oldItems[slot] else { continue }
            let newSlot = emptySlot(for: item.key.fingerprint)
            tags[newSlot] = tag
            items[newSlot] = item
        }
    }
}
