/// The one pending state snapshot (docs/mqtt.md, "Snapshots"): at most one entry per topic, never stored in
/// the outbox, so snapshots cannot fill it or evict real events. A newer snapshot replaces the entries of an
/// older one; a later event on the same topic supersedes an entry (its value is newer). Entries are sent in
/// sequence order once the outbox is drained, so no older row can overwrite them afterwards.
struct SnapshotSlot: Sendable {
    /// Topic -> sequence of the entry that is current for it.
    private var current: [String: UInt64] = [:]
    /// Entries in sequence order from `head`; some may be stale (replaced, superseded), skipped when reached.
    private var queue: [EventEnvelope] = []
    private var head = 0

    var count: Int { current.count }

    /// Takes a new snapshot; returns how many pending entries it replaced.
    mutating func replace(with envelopes: [EventEnvelope]) -> Int {
        var replaced = 0
        for envelope in envelopes {
            if current.updateValue(envelope.sequence, forKey: envelope.topic) != nil { replaced += 1 }
        }
        queue =
            queue[head...].filter { current[$0.topic] == $0.sequence }
            + envelopes.filter { current[$0.topic] == $0.sequence }
        queue.sort { $0.sequence < $1.sequence }
        head = 0
        return replaced
    }

    /// Events that supersede entries on their topics; returns how many entries were dropped.
    mutating func supersede(by envelopes: [EventEnvelope]) -> Int {
        guard !current.isEmpty else { return 0 }
        var superseded = 0
        for envelope in envelopes {
            if let pending = current[envelope.topic], pending < envelope.sequence {
                current.removeValue(forKey: envelope.topic)
                superseded += 1
            }
        }
        if current.isEmpty {
            queue = []
            head = 0
        }
        return superseded
    }

    /// The next entry to send (removed from the slot).
    mutating func next() -> EventEnvelope? {
        while head < queue.count {
            let entry = queue[head]
            head += 1
            if current[entry.topic] == entry.sequence {
                current.removeValue(forKey: entry.topic)
                if head == queue.count {
                    queue = []
                    head = 0
                }
                return entry
            }
        }
        queue = []
        head = 0
        return nil
    }

    /// An entry that could not be sent goes back, unless its topic has a newer value by now.
    mutating func putBack(_ envelope: EventEnvelope) {
        guard current[envelope.topic] == nil else { return }
        current[envelope.topic] = envelope.sequence
        queue = [envelope] + queue[head...]
        head = 0
    }

    /// Forgets every entry; returns how many.
    mutating func removeAll() -> Int {
        defer {
            current = [:]
            queue = []
            head = 0
        }
        return current.count
    }
}
