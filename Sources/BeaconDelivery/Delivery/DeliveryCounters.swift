/// The delivery state machine's own figures (the adapter adds the outbox's and the transport's).
public struct DeliveryCounters: Sendable, Equatable {
    /// Events handed to the transport (live, from the outbox, snapshot entries).
    public var published = 0
    /// Events acknowledged by the broker (QoS 1/2) or written (QoS 0).
    public var acknowledged = 0
    /// Events written to the outbox.
    public var queued = 0
    /// Events sent from the outbox.
    public var drained = 0
    /// Drops counted by the machine: `connection_lost` (QoS 0 in flight at a disconnect), `outbox_unavailable`.
    public var dropped: [String: Int] = [:]
    /// Events moved to the dead-letter table: refused by the broker (they were published first), by the client
    /// library (`refusedUnsent`), or blamed for connection drops.
    public var deadLettered = 0
    /// Events the transport refused outright (over the broker's maximum packet size, invalid topic, ...): dead
    /// letters that were never handed over, so `published` does not count them. An event's fate is settled by
    /// `published`, `refusedUnsent`, a drop or a superseded snapshot entry: counting all four is what tells a
    /// waiter that nothing is outstanding (`PublisherCounters.settled`).
    public var refusedUnsent = 0
    public var refusalsRetried = 0
    public var connects = 0
    public var connected = false
    public var inflight = 0
    /// The database failed and the memory outbox took over.
    public var outboxDegraded = false
    /// Snapshot entries sent, and those replaced by a newer snapshot or superseded by a later event on their
    /// topic before they could be sent (not drops: the newer value is what the topic carries).
    public var snapshotSent = 0
    public var snapshotSuperseded = 0
    public var lastError: String?
    /// Seconds from acceptance to acknowledgement of live events and outbox rows (`DeliveryLatency`).
    public var latency = DeliveryLatency()
    /// Acknowledged events whose acceptance the machine no longer knew (older than `AcceptanceLog`'s ring, or
    /// stored before a restart): not in `latency`.
    public var latencyUnknown = 0

    public init() {}
}
