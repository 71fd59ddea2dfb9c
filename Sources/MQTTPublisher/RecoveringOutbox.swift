import BeaconDelivery
import BeaconEvents
import BeaconModel

/// The outbox while the database fails (disk full, I/O error; docs/outbox.md, "Failures"): new events wait
/// in memory (`outbox.memory_max_rows`), the database's rows stay where they are and are still read (a full
/// disk still reads), and both come back in one sequence order, so nothing written before the failure is
/// published after newer events. Deletions the database cannot take now are remembered (those rows are not
/// read again) and retried. `writeBack()` moves the memory backlog into the database, in one transaction,
/// once it accepts writes again; the publisher then uses the database alone.
actor RecoveringOutbox: EventOutbox {
    let database: any EventOutbox
    let memory: MemoryOutbox
    /// Acknowledged or dead-lettered rows the database could not delete yet.
    private var pendingDeletes: Set<UInt64> = []

    init(database: any EventOutbox, memory: MemoryOutbox) {
        self.database = database
        self.memory = memory
    }

    func append(_ envelopes: [EventEnvelope]) async { await memory.append(envelopes) }

    func peek(after sequence: UInt64?, limit: Int) async -> [EventEnvelope] {
        guard limit > 0 else { return [] }
        var stored: [EventEnvelope] = []
        var cursor = sequence
        let pending = pendingDeletes
        // Rows deleted in memory only are skipped; read on until `limit` others or the end.
        while stored.count < limit, let page = try? await database.peek(after: cursor, limit: limit),
            let last = page.last
        {
            stored += page.filter { !pending.contains($0.sequence) }
            cursor = last.sequence
            if page.count < limit { break }
        }
        let kept = await memory.peek(after: sequence, limit: limit)
        var merged: [EventEnvelope] = []
        merged.reserveCapacity(min(limit, stored.count + kept.count))
        var (i, j) = (0, 0)
        while merged.count < limit && (i < stored.count || j < kept.count) {
            if j >= kept.count || (i < stored.count && stored[i].sequence <= kept[j].sequence) {
                if j < kept.count && stored[i].sequence == kept[j].sequence { j += 1 }
                merged.append(stored[i])
                i += 1
            } else {
                merged.append(kept[j])
                j += 1
            }
        }
        return merged
    }

    func delete(_ sequences: [UInt64]) async {
        guard !sequences.isEmpty else { return }
        await memory.delete(sequences)
        do { try await database.delete(sequences) } catch { pendingDeletes.formUnion(sequences) }
    }

    func expire(before captureTime: Timestamp) async {
        await memory.expire(before: captureTime)
        try? await database.expire(before: captureTime)
    }

    /// Rows in both (the database's minus those waiting to be deleted); drops of the memory part only (the
    /// database's own were counted before the failure and are counted again once it is back).
    func stats() async -> OutboxStats {
        var figures = await memory.stats()
        if let stored = try? await database.stats() {
            figures.rows += max(0, stored.rows - pendingDeletes.count)
            figures.bytes += stored.bytes
            figures.deadLetters += stored.deadLetters
        }
        return figures
    }

    func deadLetter(_ letters: [DeadLetter]) async {
        guard !letters.isEmpty else { return }
        do {
            try await database.deadLetter(letters)
            await memory.delete(letters.map(\.envelope.sequence))
        } catch {
            await memory.deadLetter(letters)
            pendingDeletes.formUnion(letters.map(\.envelope.sequence))
        }
    }

    func deadLetters(limit: Int) async -> [DeadLetter] {
        let stored = (try? await database.deadLetters(limit: limit)) ?? []
        let kept = await memory.deadLetters(limit: limit)
        return Array((stored + kept).sorted { $0.envelope.sequence < $1.envelope.sequence }.prefix(max(0, limit)))
    }

    func requeueDeadLetters() async -> Int {
        let stored = (try? await database.requeueDeadLetters()) ?? 0
        return stored + (await memory.requeueDeadLetters())
    }

    /// Rows waiting in memory now.
    var memoryRows: Int { get async { await memory.stats().rows } }

    /// Writes back: the pending deletions, then the memory backlog and its dead letters, each in one
    /// transaction. True when the database took everything (the publisher then drops this outbox and uses the
    /// database alone); false leaves everything as it was, to be tried again.
    func writeBack() async -> Bool {
        if !pendingDeletes.isEmpty {
            do { try await database.delete(pendingDeletes.sorted()) } catch { return false }
            pendingDeletes = []
        }
        let held = await memory.stats()
        let rows = await memory.peek(after: nil, limit: held.rows)
        let letters = await memory.deadLetters(limit: held.deadLetters)
        do {
            if !rows.isEmpty { try await database.append(rows) }
            if !letters.isEmpty { try await database.deadLetter(letters) }
        } catch {
            return false
        }
        return true
    }
}
