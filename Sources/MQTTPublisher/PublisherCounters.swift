import BeaconCore

/// Figures for telemetry, readable at any time (`EventPublisher.counters`).
public struct PublisherCounters: Sendable, Equatable {
    /// Envelopes handed to `publish(_:)`. `submitted - acknowledged` is what the caller has outstanding (queued
    /// for the loop, in flight or in the outbox): a producer can pace itself on it.
    public var submitted = 0
    /// The delivery machine's own figures, held whole (not copied field by field); the properties that are its
    /// read through to it. `dropped` and `lastError` are the publisher's own: they add the outbox's drops and the
    /// transport's errors to the machine's.
    public var delivery = DeliveryCounters()
    /// Events handed to libmosquitto (live and from the outbox).
    public var published: Int {
        get { delivery.published }
        set { delivery.published = newValue }
    }
    /// Events acknowledged by the broker (QoS 1/2) or written to the socket (QoS 0).
    public var acknowledged: Int {
        get { delivery.acknowledged }
        set { delivery.acknowledged = newValue }
    }
    /// Events written to the outbox (disconnected, window full, unacknowledged at disconnect or stop).
    public var queued: Int {
        get { delivery.queued }
        set { delivery.queued = newValue }
    }
    /// Events sent from the outbox after a reconnect.
    public var drained: Int {
        get { delivery.drained }
        set { delivery.drained = newValue }
    }
    /// Dropped events by reason: the outbox's (`expired`, `row_cap`, `byte_cap`, also from the memory
    /// fallback) plus `connection_lost` (QoS 0 events in flight when the connection broke) and
    /// `outbox_unavailable` (an append failed on both the database and the memory fallback).
    public var dropped: [String: Int] = [:]
    /// Events moved to the dead-letter table (refused by the broker or the client library) by this process.
    public var deadLettered: Int {
        get { delivery.deadLettered }
        set { delivery.deadLettered = newValue }
    }
    /// Of those, events the client library refused before handing them over (never `published`).
    public var refusedUnsent: Int {
        get { delivery.refusedUnsent }
        set { delivery.refusedUnsent = newValue }
    }
    /// Refusals that were retried (a transient reason code, or a connection dropped right after the event).
    public var refusalsRetried: Int {
        get { delivery.refusalsRetried }
        set { delivery.refusalsRetried = newValue }
    }
    /// Rows in the dead-letter table.
    public var deadLetterRows = 0
    public var backlogRows = 0
    public var backlogBytes = 0
    public var inflight: Int {
        get { delivery.inflight }
        set { delivery.inflight = newValue }
    }
    public var connected: Bool {
        get { delivery.connected }
        set { delivery.connected = newValue }
    }
    /// Connected with the outbox drained (events go straight to the broker): the delivery machine is `live`.
    public var live = false
    public var connects: Int {
        get { delivery.connects }
        set { delivery.connects = newValue }
    }
    public var connectionFailures = 0
    /// True once the database failed and the memory fallback took over.
    public var outboxDegraded: Bool {
        get { delivery.outboxDegraded }
        set { delivery.outboxDegraded = newValue }
    }
    public var lastError: String?
    /// Snapshot entries handed to `publishSnapshot(_:)` (also in `submitted`), sent, and replaced or superseded
    /// before they could be sent (docs/mqtt.md, "Snapshots"; not drops: the topic carries a newer value).
    public var snapshotSubmitted = 0
    public var snapshotSent: Int {
        get { delivery.snapshotSent }
        set { delivery.snapshotSent = newValue }
    }
    public var snapshotSuperseded: Int {
        get { delivery.snapshotSuperseded }
        set { delivery.snapshotSuperseded = newValue }
    }
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
