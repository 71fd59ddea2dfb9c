import BeaconDelivery

/// Figures for telemetry, readable at any time (`EventPublisher.counters`). The delivery machine's figures
/// (`published`: handed to libmosquitto, live and from the outbox; `acknowledged`: by the broker for QoS 1/2, written
/// to the socket for QoS 0; `queued`, `drained`, `deadLettered`, `refusedUnsent`, `refusalsRetried`, `inflight`,
/// `connected`, `connects`, `outboxDegraded`, `snapshotSent`, `snapshotSuperseded`) are read and written through
/// to `delivery` (`DeliveryCounters` documents them); the stored properties here are the publisher's own.
@dynamicMemberLookup
public struct PublisherCounters: Sendable, Equatable {
    /// Envelopes handed to `publish(_:)`. `submitted - acknowledged` is what the caller has outstanding (queued
    /// for the loop, in flight or in the outbox): a producer can pace itself on it.
    public var submitted = 0
    /// The delivery machine's own figures, held whole (not copied field by field). `dropped` and `lastError` are
    /// the publisher's own: they add the outbox's drops and the transport's errors to the machine's.
    public var delivery = DeliveryCounters()

    /// The machine's figures, by name (`counters.published`): stored properties of this type (`dropped`,
    /// `lastError`) take precedence over these.
    @inlinable public subscript<Value>(dynamicMember keyPath: WritableKeyPath<DeliveryCounters, Value>) -> Value {
        get { delivery[keyPath: keyPath] }
        set { delivery[keyPath: keyPath] = newValue }
    }
    /// Dropped events by reason: the outbox's (`expired`, `row_cap`, `byte_cap`, also from the memory
    /// fallback) plus `connection_lost` (QoS 0 events in flight when the connection broke) and
    /// `outbox_unavailable` (an append failed on both the database and the memory fallback).
    public var dropped: [String: Int] = [:]
    /// Rows in the dead-letter table.
    public var deadLetterRows = 0
    public var backlogRows = 0
    public var backlogBytes = 0
    /// Connected with the outbox drained (events go straight to the broker): the delivery machine is `live`.
    public var live = false
    public var connectionFailures = 0
    public var lastError: String?
    /// Snapshot entries handed to `publishSnapshot(_:)` (also in `submitted`), sent, and replaced or superseded
    /// before they could be sent (docs/mqtt.md, "Snapshots"; not drops: the topic carries a newer value).
    public var snapshotSubmitted = 0
    /// Drops counted by a replaced outbox (the database before the memory fallback took over).
    var storeDropBase: [OutboxDropReason: Int] = [:]

    public init() {}

    public var droppedTotal: Int { dropped.values.reduce(0, +) }

    /// Submitted events whose fate is settled without an acknowledgement pending: handed to the transport,
    /// refused by the client library (dead letters never handed over), dropped (counted) or superseded
    /// snapshot entries. Equal to `submitted` once nothing waits.
    public var settled: Int { delivery.published + delivery.refusedUnsent + droppedTotal + delivery.snapshotSuperseded }

    /// Counters as telemetry name/value pairs (snake_case), stable order.
    public var telemetry: [(String, Int64)] {
        var out: [(String, Int64)] = [
            ("published", Int64(delivery.published)), ("acknowledged", Int64(delivery.acknowledged)),
            ("queued", Int64(delivery.queued)),
            ("drained", Int64(delivery.drained)), ("outbox_rows", Int64(backlogRows)),
            ("outbox_bytes", Int64(backlogBytes)),
            ("inflight", Int64(delivery.inflight)), ("connects", Int64(delivery.connects)),
            ("connection_failures", Int64(connectionFailures)), ("outbox_degraded", delivery.outboxDegraded ? 1 : 0),
            ("dropped", Int64(droppedTotal)), ("dead_lettered", Int64(delivery.deadLettered)),
            ("dead_letter_rows", Int64(deadLetterRows)), ("refusals_retried", Int64(delivery.refusalsRetried)),
            ("snapshot_sent", Int64(delivery.snapshotSent)),
            ("snapshot_superseded", Int64(delivery.snapshotSuperseded)),
        ]
        for (reason, count) in dropped.sorted(by: { $0.key < $1.key }) {
            out.append(("dropped_\(reason)", Int64(count)))
        }
        return out
    }
}
