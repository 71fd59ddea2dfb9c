import BeaconEvents

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

    package var count: Int { current.count }

    /// Takes a new snapshot; returns how many pending entries it replaced.
    /// Entries are told apart by topic, not by sequence: snapshots of their own kind (the calibration, room
    /// probabilities) all carry sequence 0, so an older entry on a topic must go by topic, or it would still
    /// look current and be sent instead of the newer one.
    mutating func replace(with envelopes: [EventEnvelope]) -> Int {
        // The last entry per topic of this snapshot (earlier ones in the same batch are superseded by it).
        var latest: [String: Int] = [:]
        for (index, envelope) in envelopes.enumerated() { latest[envelope.topic] = index }
        var replaced = envelopes.count - latest.count
        for (topic, index) in latest where current.updateValue(envelopes[index].sequence, forKey: topic) != nil {
            replaced += 1
        }
        queue =
            queue[head...].filter { latest[$0.topic] == nil && current[$0.topic] == $0.sequence }
            + envelopes.indices.filter { latest[envelopes[$0].topic] == $0 }.map { envelopes[$0] }
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
    package mutating func next() -> EventEnvelope? {
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
    package mutating func removeAll() -> Int {
        defer {
            current = [:]
            queue = []
            head = 0
        }
        return current.count
    }
}
