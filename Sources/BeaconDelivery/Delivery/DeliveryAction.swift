import BeaconEvents
import BeaconModel

/// What the delivery state machine asks its adapter to do. Actions marked "answer" must be answered with the
/// named input before the adapter performs the next action of the same list (the adapter feeds the answer back
/// at once, so the machine always knows what happened before it decides again).
public enum DeliveryAction: Sendable, Equatable {
    /// Hand an event to the transport. Answer: `.sent` or `.sendFailed`.
    case send(EventEnvelope)
    /// Hand a control message (availability, discovery) to the transport; its acknowledgement is not tracked.
    case sendControl(ControlMessage)
    /// Subscribe to a topic filter.
    case subscribe(filter: String, qos: UInt8)
    /// Store events in the outbox, in one transaction. Answer: `.appended` or `.outboxFailed`.
    case append([EventEnvelope])
    /// Read up to `limit` outbox rows after `after` (all when nil), in sequence order. Answer: `.rows` or `.outboxFailed`.
    case read(after: UInt64?, limit: Int)
    /// Delete acknowledged rows. Answer only on failure: `.outboxFailed`.
    case delete([UInt64])
    /// Drop expiring kinds captured before the time. Answer only on failure: `.outboxFailed`.
    case expire(before: Timestamp)
    /// Move refused events to the dead-letter table. Answer only on failure: `.outboxFailed`.
    case deadLetter([DeadLetter])
    /// The database failed: keep the backlog in a memory outbox from now on.
    case useMemoryOutbox
    /// Read the outbox's figures (rows, bytes, drops) for telemetry.
    case refreshStats
    /// Tell the owner.
    case notify(DeliveryNotice)
    /// Delivery is over (after `.stop`): the adapter ends its loop.
    case finish
}

/// What the machine reports to the owner of the publisher.
public enum DeliveryNotice: Sendable, Equatable {
    case connected
    /// Publish a state snapshot now (after every connect, when Home Assistant announces `online`).
    case snapshotRequested(homeAssistantOnline: Bool)
    case eventsDropped(reason: String, count: Int)
    case deadLettered(count: Int, firstSequence: UInt64, topic: String, reason: String)
    case outboxFailed(String)
}
