import BeaconCore

extension PublisherDelivery {
    /// Performs an outbox action of the machine; a failure is answered with `.outboxFailed` (the machine then
    /// switches to the memory outbox once, docs/outbox.md "Failures").
    func performOutbox(_ action: DeliveryAction) async -> DeliveryInput? {
        switch action {
        case let .append(envelopes):
            do { try await store.append(envelopes) } catch { return .outboxFailed(.append(envelopes), message: "\(error)") }
            return .appended(count: envelopes.count)
        case let .read(after, limit):
            do { return .rows(try await store.peek(after: after, limit: limit)) } catch { return .outboxFailed(.read, message: "\(error)") }
        case let .delete(sequences):
            do { try await store.delete(sequences) } catch { return .outboxFailed(.delete(sequences), message: "\(error)") }
        case let .expire(before):
            do { try await store.expire(before: before) } catch { return .outboxFailed(.expire, message: "\(error)") }
        case let .deadLetter(letters):
            do { try await store.deadLetter(letters) } catch { return .outboxFailed(.deadLetter(letters), message: "\(error)") }
        case .useMemoryOutbox:
            let previous = try? await store.stats()
            for (reason, count) in previous?.dropped ?? [:] { storeDropBase[reason, default: 0] += count }
            storeDropped = [:]
            store = MemoryOutbox(maxRows: settings.memoryMaxRows, maxBytes: settings.maxBytes)
        case .refreshStats:
            await refreshBacklog()
        default:
            break
        }
        return nil
    }

    /// Reads the outbox's figures; reports drops that grew since the last look.
    func refreshBacklog() async {
        guard let stats = try? await store.stats() else { return }
        backlog = (stats.rows, stats.bytes, stats.deadLetters)
        var increases: [(String, Int)] = []
        for reason in OutboxDropReason.allCases {
            let previous = storeDropped[reason] ?? 0
            let now = stats.dropped[reason] ?? 0
            if now > previous { increases.append((reason.rawValue, now - previous)) }
        }
        storeDropped = stats.dropped
        publishCounters()
        for (reason, count) in increases { publisher.notify(.eventsDropped(reason: reason, count: count)) }
    }

    /// Drop reason for events the memory outbox held at the end of `run()`.
    static let notPersisted = "not_persisted"

    /// The end of `run()` with the memory outbox (no usable database, or it failed while running): what it
    /// still holds ends with the process. Every such event is counted as dropped (`not_persisted`) and
    /// reported, and the backlog figure says 0, so the exit log does not claim `dropped=0` with events kept.
    func discardMemoryBacklog() async {
        guard let memory = store as? MemoryOutbox, let stats = try? await memory.stats(), stats.rows > 0 else { return }
        discardedAtStop += stats.rows
        backlog = (0, 0, backlog.deadLetters)
        publisher.notify(.eventsDropped(reason: PublisherDelivery.notPersisted, count: stats.rows))
    }
}
