import BeaconDelivery
import BeaconRuntime

extension PublisherDelivery {
    /// Performs an outbox action of the machine; a failure is answered with `.outboxFailed` (the machine then
    /// switches to the memory outbox once, docs/outbox.md "Failures").
    func performOutbox(_ action: DeliveryAction) async -> DeliveryInput? {
        switch action {
        case let .append(envelopes):
            do { try await store.append(envelopes) } catch {
                return .outboxFailed(.append(envelopes), message: "\(error)")
            }
            return .appended(count: envelopes.count)
        case let .read(after, limit):
            do { return .rows(try await store.peek(after: after, limit: limit)) } catch {
                return .outboxFailed(.read, message: "\(error)")
            }
        case let .delete(sequences):
            do { try await store.delete(sequences) } catch {
                return .outboxFailed(.delete(sequences), message: "\(error)")
            }
        case let .expire(before):
            let cutoff = publisher.configuration.ageClock.map { $0() - settings.sightingMaxAge } ?? before
            do { try await store.expire(before: cutoff) } catch { return .outboxFailed(.expire, message: "\(error)") }
        case let .deadLetter(letters):
            do { try await store.deadLetter(letters) } catch {
                return .outboxFailed(.deadLetter(letters), message: "\(error)")
            }
        case .useMemoryOutbox:
            let previous = try? await store.stats()
            for (reason, count) in previous?.dropped ?? [:] { storeDropBase[reason, default: 0] += count }
            storeDropped = [:]
            let memory = MemoryOutbox(maxRows: settings.memoryMaxRows, maxBytes: settings.maxBytes)
            if let database = publisher.store {
                // Kept: still read, and written back once it takes writes again (`tryWriteBack`).
                databaseDropsAtFailure = previous?.dropped ?? [:]
                lastWriteBackTry = SystemClock.monotonic()
                store = RecoveringOutbox(database: database, memory: memory)
            } else {
                store = memory
            }
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

    /// Seconds between two attempts to write the memory backlog back into a failed database (tried on a tick:
    /// 4 a second while the owner delivers with `DeliveryDriver.deliver(until:)`, once a second in the daemon's loop).
    static let writeBackInterval: Double = 2

    /// While the database fails: every `writeBackInterval` seconds, tries to write the memory backlog back into it
    /// (`RecoveringOutbox.writeBack`); on success the database is the outbox again, the machine is told
    /// (`.outboxRecovered`) and the owner too.
    func tryWriteBack(force: Bool = false) async {
        guard let recovering = store as? RecoveringOutbox else { return }
        let now = SystemClock.monotonic()
        guard force || now - lastWriteBackTry >= PublisherDelivery.writeBackInterval else { return }
        lastWriteBackTry = now
        let memoryPart = await recovering.stats()
        let rows = await recovering.memoryRows
        guard await recovering.writeBack() else { return }
        store = recovering.database
        // The memory part's drops become history; the database's count as current again.
        for (reason, count) in memoryPart.dropped { storeDropBase[reason, default: 0] += count }
        for (reason, count) in databaseDropsAtFailure { storeDropBase[reason, default: 0] -= count }
        storeDropped = databaseDropsAtFailure
        await run(.outboxRecovered)
        publisher.notify(.outboxRecovered(rowsWrittenBack: rows))
        await refreshBacklog()
    }

    /// Seconds between two checks that the outbox file is still the one open (on a tick, as `writeBackInterval`).
    static let fileCheckInterval: Double = 2

    /// Every `fileCheckInterval` seconds: asks the database whether its file was deleted, truncated or replaced
    /// (`FileBackedOutbox.verifyFile`, a `stat` when all is well); a loss is reported (the database has
    /// re-created itself at the path by then) and the backlog figures are read again, so the events that
    /// could not be copied show as dropped (`file_lost`).
    func checkOutboxFile() async {
        guard let database = publisher.store as? any FileBackedOutbox else { return }
        let now = SystemClock.monotonic()
        guard now - lastFileCheck >= PublisherDelivery.fileCheckInterval else { return }
        lastFileCheck = now
        guard let recovery = await database.verifyFile() else { return }
        publisher.notify(.outboxFileLost(recovery))
        await refreshBacklog()
    }

    /// The end of `run()` with the memory outbox (no usable database, or it failed while running and still
    /// fails: one last write-back is tried first): what it still holds ends with the process. Every such
    /// event is counted as dropped (`not_persisted`) and reported, and the backlog figure counts only the rows
    /// the database keeps, so the exit log does not claim `dropped=0` with events discarded.
    func discardMemoryBacklog() async {
        if store is RecoveringOutbox { await tryWriteBack(force: true) }
        let lost: Int
        if let recovering = store as? RecoveringOutbox {
            lost = await recovering.memoryRows
            let figures = await recovering.stats()
            backlog = (max(0, figures.rows - lost), backlog.bytes, figures.deadLetters)
        } else if let memory = store as? MemoryOutbox {
            lost = await memory.stats().rows
            backlog = (0, 0, backlog.deadLetters)
        } else {
            return
        }
        guard lost > 0 else { return }
        discardedAtStop += lost
        publisher.notify(.eventsDropped(reason: PublisherDelivery.notPersisted, count: lost))
    }
}
