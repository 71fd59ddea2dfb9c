import BeaconCore

extension PublisherDelivery {
    /// Appends to the outbox; on a database error switches to the memory fallback (once) and retries there.
    func append(_ envelopes: [EventEnvelope]) async {
        guard !envelopes.isEmpty else { return }
        let stored = await storeCall { [self] in try await store.append(envelopes) } != nil
        if stored {
            publisher.sharedCounters.withLock { $0.queued += envelopes.count }
        } else {
            // storeCall switched to the memory outbox; one more try there.
            if (try? await store.append(envelopes)) != nil {
                publisher.sharedCounters.withLock { $0.queued += envelopes.count }
            } else {
                publisher.sharedCounters.withLock { $0.dropped["outbox_unavailable", default: 0] += envelopes.count }
                publisher.notify(.eventsDropped(reason: "outbox_unavailable", count: envelopes.count))
            }
        }
    }

    func flushDeletes() async {
        guard !acknowledgedRows.isEmpty else { return }
        let rows = acknowledgedRows
        acknowledgedRows.removeAll(keepingCapacity: true)
        await storeCall { [self] in try await store.delete(rows) }
    }

    func refreshBacklog() async {
        guard let stats = await storeCall({ [self] in try await store.stats() }) else { return }
        let increases = publisher.sharedCounters.withLock { counters -> [(String, Int)] in
            counters.backlogRows = stats.rows
            counters.backlogBytes = stats.bytes
            counters.deadLetterRows = stats.deadLetters
            var increases: [(String, Int)] = []
            for reason in OutboxDropReason.allCases {
                let total = (counters.storeDropBase[reason] ?? 0) + (stats.dropped[reason] ?? 0)
                let previous = counters.dropped[reason.rawValue] ?? 0
                if total > previous {
                    counters.dropped[reason.rawValue] = total
                    increases.append((reason.rawValue, total - previous))
                }
            }
            return increases
        }
        for (reason, count) in increases { publisher.notify(.eventsDropped(reason: reason, count: count)) }
    }

    /// Runs an outbox operation. A failure of the database (disk full, corrupt file, I/O error) is reported
    /// once and the memory outbox takes over: the gateway keeps publishing live. Returns nil on failure.
    @discardableResult
    func storeCall<T>(_ body: () async throws -> T) async -> T? {
        do {
            return try await body()
        } catch {
            guard !degraded else { return nil }
            degraded = true
            let message = "outbox database failed, keeping events in memory only: \(error)"
            let previous = try? await store.stats()
            store = MemoryOutbox(maxRows: settings.memoryMaxRows, maxBytes: settings.maxBytes)
            drainBatch = []
            drainCursor = nil
            publisher.sharedCounters.withLock { counters in
                counters.outboxDegraded = true
                counters.lastError = message
                for (reason, count) in previous?.dropped ?? [:] { counters.storeDropBase[reason, default: 0] += count }
            }
            publisher.notify(.outboxFailed(message))
            return nil
        }
    }
}
