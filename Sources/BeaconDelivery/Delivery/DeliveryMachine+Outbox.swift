/// A failing database (disk full, I/O error, damaged file): reported, then the memory outbox takes over (the
/// adapter keeps reading the database's rows and writes the memory backlog back once it takes writes again:
/// `.outboxRecovered`) and the gateway keeps publishing (docs/outbox.md, "Failures").
extension DeliveryMachine {
    package mutating func outboxFailed(
        _ operation: OutboxOperation, _ message: String, into actions: inout [DeliveryAction]
    ) {
        if case .read = operation, case .read = awaiting { awaiting = .nothing }
        guard !counters.outboxDegraded else {
            // The memory outbox failed too (it does not, short of a bug): count what is lost.
            let lost: Int
            switch operation {
            case let .append(envelopes): lost = envelopes.count
            case let .deadLetter(letters): lost = letters.count
            case .read, .delete, .expire: lost = 0
            }
            if lost > 0 {
                counters.dropped["outbox_unavailable", default: 0] += lost
                actions.append(.notify(.eventsDropped(reason: "outbox_unavailable", count: lost)))
            }
            return
        }
        let text = "outbox database failed, keeping new events in memory until it takes writes again: \(message)"
        counters.outboxDegraded = true
        counters.lastError = text
        modifyDrain { $0 = Drain(sendBlocked: $0.sendBlocked) }
        modifyLive { $0.cursor = nil }
        actions.append(.useMemoryOutbox)
        actions.append(.notify(.outboxFailed(text)))
        switch operation {
        case let .append(envelopes): actions.append(.append(envelopes))
        case let .deadLetter(letters): actions.append(.deadLetter(letters))
        case .read, .delete, .expire: break
        }
    }
}
