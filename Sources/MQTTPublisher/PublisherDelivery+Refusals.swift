import BeaconCore

/// Refused events (docs/outbox.md, "Refused events"): an outcome, not a retry loop. A permanent refusal
/// dead-letters at once, a transient one is retried a bounded number of times (`RefusalTracker`).
extension PublisherDelivery {
    /// The broker answered `messageID` with a failure reason code (MQTT 5).
    func refused(_ messageID: Int32, _ refusal: PublishRefusal) async {
        guard let entry = inflight.removeValue(forKey: messageID) else { return }
        if entry.fromOutbox { outboxInflight -= 1 }
        switch refusals.refused(entry.envelope.sequence, refusal) {
        case let .deadLetter(final, attempts):
            await deadLetter([entry.envelope], final, attempts: attempts)
        case .retry:
            publisher.sharedCounters.withLock { $0.refusalsRetried += 1; $0.lastError = refusal.reason }
            // Send it again from the outbox, in sequence order: store it (a live event) and rewind the cursor.
            if !entry.fromOutbox { await append([entry.envelope]) }
            rewind(before: entry.envelope.sequence)
        }
        if connected && !live && !stopping { await drain() }
    }

    /// The connection broke. If events were sent just before (MQTT 3.1.1 brokers refuse by disconnecting):
    /// with one event in flight, count the drop against it and dead-letter it once the count reaches the bound;
    /// with several, the culprit is unknown, so send one at a time for a while (`probing`) to find it.
    func suspectOldestInflight() async {
        let now = publisher.configuration.now()
        guard inflight.values.contains(where: { now - $0.sentAt <= refusals.suspectWindow }),
              let (messageID, oldest) = inflight.min(by: { $0.value.envelope.sequence < $1.value.envelope.sequence })
        else { return }
        guard inflight.count == 1 else {
            probing = true
            probeAcknowledgements = 0
            return
        }
        switch refusals.connectionDropped(oldest: oldest.envelope.sequence, secondsSinceSent: now - oldest.sentAt) {
        case let .deadLetter(refusal, attempts)?:
            inflight.removeValue(forKey: messageID)
            if oldest.fromOutbox { outboxInflight -= 1 }
            await deadLetter([oldest.envelope], refusal, attempts: attempts)
        case .retry?:
            probing = true
            probeAcknowledgements = 0
            publisher.sharedCounters.withLock { $0.refusalsRetried += 1 }
        case nil:
            break
        }
    }

    /// Moves envelopes to the dead-letter table (out of the outbox where they are stored), counts and reports
    /// them. Falls back to the memory outbox like every other store call.
    func deadLetter(_ envelopes: [EventEnvelope], _ refusal: PublishRefusal, attempts: Int) async {
        guard let first = envelopes.first else { return }
        let now = publisher.configuration.now()
        let letters = envelopes.map { DeadLetter(envelope: $0, reason: refusal.reason, attempts: attempts, time: now) }
        if await storeCall({ [self] in try await store.deadLetter(letters) }) == nil {
            if (try? await store.deadLetter(letters)) == nil {
                publisher.sharedCounters.withLock { $0.dropped["outbox_unavailable", default: 0] += letters.count }
                publisher.notify(.eventsDropped(reason: "outbox_unavailable", count: letters.count))
            }
        }
        publisher.sharedCounters.withLock {
            $0.deadLettered += letters.count
            $0.lastError = "\(first.topic): \(refusal.reason)"
        }
        publisher.notify(.deadLettered(count: letters.count, firstSequence: first.sequence, topic: first.topic,
                                       reason: refusal.reason))
    }

    /// Makes the next drain start at `sequence` again (a transient refusal).
    func rewind(before sequence: UInt64) {
        live = false
        drainBatch = []
        if let cursor = drainCursor, cursor < sequence { return }
        drainCursor = sequence > 0 ? sequence - 1 : nil
    }
}
