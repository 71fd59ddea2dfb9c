import BeaconEvents
import BeaconModel

/// An in-memory `EventOutbox`: the fallback when the database cannot be used (disk full, corrupt file), and a
/// test double. Same ordering, expiry and bounds as the SQLite outbox; nothing survives a restart.
public actor MemoryOutbox: EventOutbox {
    private var rows: [EventEnvelope] = []
    private var bytes = 0
    private var dropped: [OutboxDropReason: Int] = [:]
    private var letters: [DeadLetter] = []
    public let maxRows: Int
    public let maxBytes: Int

    public init(maxRows: Int, maxBytes: Int = Int.max) {
        self.maxRows = max(1, maxRows)
        self.maxBytes = max(1, maxBytes)
    }

    public func append(_ envelopes: [EventEnvelope]) {
        guard !envelopes.isEmpty else { return }
        let existing = Set(rows.map(\.sequence))
        var needsSort = false
        for envelope in envelopes where !existing.contains(envelope.sequence) {
            if let last = rows.last, last.sequence > envelope.sequence { needsSort = true }
            rows.append(envelope)
            bytes += envelope.payloadSize
        }
        if needsSort { rows.sort { $0.sequence < $1.sequence } }
        enforceBounds()
    }

    public func peek(after sequence: UInt64?, limit: Int) -> [EventEnvelope] {
        guard limit > 0 else { return [] }
        let start = sequence.map { after in firstIndex(above: after) } ?? 0
        return Array(rows[start..<min(rows.count, start + limit)])
    }

    public func delete(_ sequences: [UInt64]) {
        guard !sequences.isEmpty else { return }
        let gone = Set(sequences)
        rows.removeAll { envelope in
            guard gone.contains(envelope.sequence) else { return false }
            bytes -= envelope.payloadSize
            return true
        }
    }

    public func expire(before captureTime: Timestamp) {
        var count = 0
        rows.removeAll { envelope in
            guard envelope.kind.expires, envelope.captureTime < captureTime else { return false }
            bytes -= envelope.payloadSize
            count += 1
            return true
        }
        if count > 0 { dropped[.expired, default: 0] += count }
    }

    public func stats() -> OutboxStats {
        OutboxStats(rows: rows.count, bytes: bytes, dropped: dropped, deadLetters: letters.count)
    }

    public func deadLetter(_ newLetters: [DeadLetter]) {
        guard !newLetters.isEmpty else { return }
        delete(newLetters.map(\.envelope.sequence))
        let known = Set(letters.map(\.envelope.sequence))
        letters += newLetters.filter { !known.contains($0.envelope.sequence) }
        letters.sort { $0.envelope.sequence < $1.envelope.sequence }
        if letters.count > DeadLetter.maxKept {
            let excess = letters.count - DeadLetter.maxKept
            letters.removeFirst(excess)
            dropped[.deadLetterCap, default: 0] += excess
        }
    }

    public func deadLetters(limit: Int) -> [DeadLetter] { Array(letters.prefix(max(0, limit))) }

    public func requeueDeadLetters() -> Int {
        let requeued = letters.map(\.envelope)
        letters.removeAll()
        append(requeued)
        return requeued.count
    }

    private func enforceBounds() {
        while let reason = OutboxEviction.overflow(rows: rows.count, bytes: bytes, maxRows: maxRows, maxBytes: maxBytes)
        {
            let index = rows.firstIndex(where: { $0.kind.expires }) ?? 0
            bytes -= rows[index].payloadSize
            rows.remove(at: index)
            dropped[reason, default: 0] += 1
        }
    }

    private func firstIndex(above sequence: UInt64) -> Int {
        var low = 0
        var high = rows.count
        while low < high {
            let mid = (low + high) / 2
            if rows[mid].sequence <= sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
