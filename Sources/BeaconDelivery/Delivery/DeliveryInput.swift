import BeaconEvents
import BeaconModel

/// What the delivery state machine (`DeliveryMachine`) is told: a request from the pipeline, something the
/// transport reported, or the result of an action the adapter performed (docs/architecture.md, "Delivery").
public enum DeliveryInput: Sendable, Equatable {
    /// New events, in sequence order.
    case publish([EventEnvelope])
    /// A retained state snapshot (region state, presence): never stored in the outbox, coalesced by topic with
    /// any earlier snapshot not sent yet, superseded by every later event on the same topic, sent once the
    /// outbox is drained.
    case snapshot([EventEnvelope])
    /// Home Assistant discovery configs: sent now (if connected), on every connect and on Home Assistant's birth.
    case discovery([ControlMessage])
    /// A reply to a command (GATT over MQTT): sent now when connected, else held in memory (at most
    /// `DeliveryMachine.maxHeldReplies`, never in the outbox) until the next connect, and dropped (counted as
    /// `reply_expired`) once `expiresAt` (wall clock) has passed: a requester waits seconds, not hours.
    case reply(ControlMessage, expiresAt: Double)
    /// Subscribe to a topic filter now (if connected) and again after every reconnect.
    case subscribe(filter: String, qos: UInt8)
    /// The transport's connection is up (CONNACK success).
    case connected
    /// The transport's connection broke (it reconnects by itself).
    case disconnected
    /// The transport has ended for good.
    case transportStopped
    /// Result of `.send`: handed to the transport with this message id.
    case sent(sequence: UInt64, messageID: Int32)
    /// Result of `.send`: not handed over. `refusal` nil means "not now" (not connected, out of memory): keep it.
    case sendFailed(sequence: UInt64, refusal: PublishRefusal?)
    /// The broker acknowledged a message (reason code 0x80 and above: refused, MQTT 5).
    case acknowledged(messageID: Int32, reasonCode: Int)
    /// A message on a subscribed topic.
    case inbound(InboundMessage)
    /// Result of `.read`.
    case rows([EventEnvelope])
    /// Result of `.append`: stored.
    case appended(count: Int)
    /// An outbox action failed (disk full, I/O error, damaged file).
    case outboxFailed(OutboxOperation, message: String)
    /// The failed database takes writes again and holds the whole backlog (the adapter wrote the memory
    /// backlog back): durable again, and a later failure is handled like the first.
    case outboxRecovered
    /// Periodic (about 4 times a second): retry sends that could not be handed over, refresh the figures.
    case tick
    /// Finish: wait for acknowledgements up to the grace period, store everything unacknowledged, say offline.
    case stop
}

/// An outbox action that failed, with what it carried (so it can be retried on the memory fallback).
public enum OutboxOperation: Sendable, Equatable {
    case append([EventEnvelope])
    case read
    case delete([UInt64])
    case expire
    case deadLetter([DeadLetter])
}
