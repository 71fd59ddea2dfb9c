import BeaconCore

/// Figures for telemetry, readable at any time (`EventPublisher.counters`).
public struct PublisherCounters: Sendable, Equatable {
    /// Envelopes handed to `publish(_:)`. `submitted - acknowledged` is what the caller has outstanding (queued
    /// for the loop, in flight or in the outbox): a producer can pace itself on it.
    public var submitted = 0
    /// Events handed to libmosquitto (live and from the outbox).
    public var published = 0
    /// Events acknowledged by the broker (QoS 1/2) or written to the socket (QoS 0).
    public var acknowledged = 0
    /// Events written to the outbox (disconnected, window full, unacknowledged at disconnect or stop).
    public var queued = 0
    /// Events sent from the outbox after a reconnect.
    public var drained = 0
    /// Dropped events by reason: the outbox's (`expired`, `row_cap`, `byte_cap`, also from the memory
    /// fallback) plus `connection_lost` (QoS 0 events in flight when the connection broke) and
    /// `outbox_unavailable` (an append failed on both the database and the memory fallback).
    public var dropped: [String: Int] = [:]
    /// Events moved to the dead-letter table (refused by the broker or the client library) by this process.
    public var deadLettered = 0
    /// Of those, events the client library refused before handing them over (never `published`).
    public var refusedUnsent = 0
    /// Refusals that were retried (a transient reason code, or a connection dropped right after the event).
    public var refusalsRetried = 0
    /// Rows in the dead-letter table.
    public var deadLetterRows = 0
    public var backlogRows = 0
    public var backlogBytes = 0
    public var inflight = 0
    public var connected = false
    /// Connected with the outbox drained (events go straight to the broker): the delivery machine is `live`.
    public var live = false
    public var connects = 0
    public var connectionFailures = 0
    /// True once the database failed and the memory fallback took over.
    public var outboxDegraded = false
    public var lastError: String?
    /// Snapshot entries handed to `publishSnapshot(_:)` (also in `submitted`), sent, and replaced or superseded
    /// before they could be sent (docs/mqtt.md, "Snapshots"; not drops: the topic carries a newer value).
    public var snapshotSubmitted = 0
    public var snapshotSent = 0
    public var snapshotSuperseded = 0
    /// Drops counted by a replaced outbox (the database before the memory fallback took over).
    var storeDropBase: [OutboxDropReason: Int] = [:]

    public init() {}

    public var droppedTotal: Int { dropped.values.reduce(0, +) }

    /// Submitted events whose fate is settled without an acknowledgement pending: handed to the transport,
    /// refused by the client library (dead letters never handed over), dropped (counted) or superseded
    /// snapshot entries. Equal to `submitted` once nothing waits.
    public var settled: Int { published + refusedUnsent + droppedTotal + snapshotSuperseded }

    /// Counters as telemetry name/value pairs (snake_case), stable order.
    public var telemetry: [(String, Int64)] {
        var out: [(String, Int64)] = [
            ("published", Int64(published)), ("acknowledged", Int64(acknowledged)), ("queued", Int64(queued)),
            ("drained", Int64(drained)), ("outbox_rows", Int64(backlogRows)), ("outbox_bytes", Int64(backlogBytes)),
            ("inflight", Int64(inflight)), ("connects", Int64(connects)),
            ("connection_failures", Int64(connectionFailures)), ("outbox_degraded", outboxDegraded ? 1 : 0),
            ("dropped", Int64(droppedTotal)), ("dead_lettered", Int64(deadLettered)),
            ("dead_letter_rows", Int64(deadLetterRows)), ("refusals_retried", Int64(refusalsRetried)),
            ("snapshot_sent", Int64(snapshotSent)), ("snapshot_superseded", Int64(snapshotSuperseded)),
        ]
        for (reason, count) in dropped.sorted(by: { $0.key < $1.key }) {
            out.append(("dropped_\(reason)", Int64(count)))
        }
        return out
    }
}
