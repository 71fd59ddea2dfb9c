import BeaconDelivery

/// What the publisher tells its owner.
public enum PublisherNotice: Sendable, Equatable {
    case connected
    case connectionFailed(TransportFailure, retryIn: Double)
    case disconnected(TransportFailure, retryIn: Double)
    /// Publish region `state` events for every (region, beacon) now: after every (re)connect and whenever
    /// Home Assistant announces `online`.
    case snapshotRequested(SnapshotReason)
    /// The outbox database failed; events are kept in memory (and the database's rows still read) until it
    /// takes writes again (`outboxRecovered`).
    case outboxFailed(String)
    /// The database takes writes again: the events kept in memory meanwhile were written back into it.
    case outboxRecovered(rowsWrittenBack: Int)
    /// The outbox file was deleted, truncated or replaced while running: what the open handle still held was
    /// copied into a new database at the path (docs/outbox.md, "The file disappears while running"). Log it
    /// as an error naming the path.
    case outboxFileLost(OutboxFileRecovery)
    /// Events were dropped (reason as in `PublisherCounters.dropped`): log it. Reported when noticed, at most
    /// once per drain step or tick for the outbox's own drops.
    case eventsDropped(reason: String, count: Int)
    /// The broker or the client library refused events; after the bounded attempts they were moved to the
    /// dead-letter table (kept, see `beaconbridge outbox`) so the events behind them flow.
    case deadLettered(count: Int, firstSequence: UInt64, topic: String, reason: String)

    public enum SnapshotReason: String, Sendable, Equatable {
        case connected
        case homeAssistantOnline = "home_assistant_online"
    }
}
