import BeaconEvents

/// Refused events (docs/outbox.md, "Refused events"): an outcome, not a retry loop. A permanent refusal
/// dead-letters at once, a transient one is retried a bounded number of times (`RefusalTracker`).
extension DeliveryMachine {
    /// The broker answered `messageID` with a failure reason code (MQTT 5).
    package mutating func refused(
        _ messageID: Int32, _ refusal: PublishRefusal, now: Double, into actions: inout [DeliveryAction]
    ) {
        guard let entry = inflight.removeValue(forKey: messageID) else { return }
        if entry.origin == .outbox { outboxInflight -= 1 }
        lastReasonCodeRefusal = now
        switch refusals.refused(entry.envelope.sequence, refusal) {
        case let .deadLetter(final, attempts):
            deadLetter([entry.envelope], final, attempts: attempts, now: now, into: &actions)
        case .retry:
            counters.refusalsRetried += 1
            counters.lastError = refusal.reason
            switch entry.origin {
            case .live:
                // Send it again from the outbox, in sequence order: store it and rewind the cursor.
                actions.append(.append([entry.envelope]))
                rewind(before: entry.envelope.sequence, into: &actions)
            case .outbox:
                rewind(before: entry.envelope.sequence, into: &actions)
            case .snapshot:
                // A later event may have updated the topic meanwhile; the next snapshot carries it again.
                counters.snapshotSuperseded += 1
            }
        }
    }

    /// The connection broke. If events were sent just before (MQTT 3.1.1 brokers refuse by disconnecting):
    /// with one event in flight, count the drop against it and dead-letter it once the count reaches the bound;
    /// with several, the culprit is unknown, so send one at a time for a while (`probing`) to find it.
    /// A drop that follows a refusal the broker gave with a reason code (MQTT 5; mosquitto 2.0 may close the
    /// connection after a denied PUBLISH) is explained by that refusal: no event still in flight is blamed.
    mutating func suspectOldestInflight(now: Double, into actions: inout [DeliveryAction]) {
        guard now - lastReasonCodeRefusal > refusals.suspectWindow else { return }
        guard inflight.values.contains(where: { now - $0.sentAt <= refusals.suspectWindow }),
            let (messageID, oldest) = inflight.min(by: { $0.value.envelope.sequence < $1.value.envelope.sequence })
        else { return }
        guard inflight.count == 1 else {
            probeAcknowledgements = 0
            return
        }
        switch refusals.connectionDropped(oldest: oldest.envelope.sequence, secondsSinceSent: now - oldest.sentAt) {
        case let .deadLetter(refusal, attempts)?:
            inflight.removeValue(forKey: messageID)
            if oldest.origin == .outbox { outboxInflight -= 1 }
            deadLetter([oldest.envelope], refusal, attempts: attempts, now: now, into: &actions)
        case .retry?:
            probeAcknowledgements = 0
            counters.refusalsRetried += 1
        case nil:
            break
        }
    }

    /// Moves envelopes to the dead-letter table (out of the outbox where they are stored), counts and reports them.
    package mutating func deadLetter(
        _ envelopes: [EventEnvelope], _ refusal: PublishRefusal, attempts: Int, now: Double,
        into actions: inout [DeliveryAction]
    ) {
        guard let first = envelopes.first else { return }
        actions.append(
            .deadLetter(
                envelopes.map { DeadLetter(envelope: $0, reason: refusal.reason, attempts: attempts, time: now) }))
        counters.deadLettered += envelopes.count
        counters.lastError = "\(first.topic): \(refusal.reason)"
        actions.append(
            .notify(
                .deadLettered(
                    count: envelopes.count, firstSequence: first.sequence, topic: first.topic,
                    reason: refusal.reason)))
    }

    /// Makes the next drain start at `sequence` again (a transient refusal).
    mutating func rewind(before sequence: UInt64, into actions: inout [DeliveryAction]) {
        spillLiveQueue(into: &actions)
        modifyDrain { drain in
            drain.batch = []
            if let cursor = drain.cursor, cursor < sequence { return }
            drain.cursor = sequence > 0 ? sequence - 1 : nil
        }
    }
}
