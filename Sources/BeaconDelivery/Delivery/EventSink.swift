import BeaconEvents
import BeaconModel

/// One destination of events, in sink-neutral terms (docs/architecture.md, "Sinks"). A sink is handed events
/// in sequence order from its own outbox cursor (`SinkCursor`) and answers each hand-over with an outcome:
/// acknowledged (the outbox may forget the events for this sink), refused (never accepted: passed over and
/// counted) or failed (not now: the same events are offered again after a backoff). The webhook
/// (`WebhookSink`) is one; MQTT's acknowledgements reach the same outbox cursors through the publisher
/// (`EventOutbox.delete`, the primary sink's).
public protocol EventSink: AnyObject, Sendable {
    /// The sink's name, which is also its cursor's name in the outbox (`webhook`).
    var name: String { get }
    /// Delivers the messages, in order, as one hand-over (one request for the webhook).
    func publish(_ messages: [SinkMessage]) async -> SinkOutcome
}

/// A sink that also receives: subscriptions and inbound messages (MQTT has them; the webhook has not).
public protocol SubscribingSink: EventSink {
    /// Subscribes to a topic filter, now and after every reconnect.
    func subscribe(_ filter: String, qos: UInt8)
    /// Messages that arrived on subscribed topics.
    var inbound: AsyncStream<InboundMessage> { get }
}

/// An event as a sink sees it: its id, where it goes and what it says.
public struct SinkMessage: Sendable, Equatable {
    /// The event's id (`<gateway>-<sequence>`): receivers de-duplicate on it (delivery is at least once).
    public var id: String
    public var sequence: UInt64
    public var kind: EventKind
    /// The MQTT topic the same event is published on.
    public var topic: String
    /// The JSON event, byte for byte the MQTT payload.
    public var payload: String

    public init(_ envelope: EventEnvelope) {
        id = envelope.id
        sequence = envelope.sequence
        kind = envelope.kind
        topic = envelope.topic
        payload = envelope.payload
    }
}

/// How a hand-over to a sink went.
public enum SinkOutcome: Sendable, Equatable {
    /// Every message was accepted.
    case acknowledged
    /// The sink will never accept these messages (a 4xx other than 408/429 from a webhook): they are passed
    /// over, counted and reported, so they do not hold back the events behind them.
    case refused(reason: String)
    /// Not now (connection refused, timeout, 5xx, 408, 429): offered again after a backoff, no sooner than
    /// `retryAfter` seconds when the sink was told (an HTTP `Retry-After`).
    case failed(reason: String, retryAfter: Double?)
}

/// The outbox as a cursor-driven sink sees it (docs/outbox.md, "Sinks"): the rows it has not acknowledged,
/// and its acknowledgements. `GatewayDatabase` is one; tests use a fake.
public protocol SinkOutbox: Sendable {
    /// Up to `limit` rows after `sequence` (all when nil) that `sink` has not acknowledged, in sequence order.
    func peek(for sink: String, after sequence: UInt64?, limit: Int) async throws -> [EventEnvelope]
    /// `sink` acknowledged the rows; a row every configured sink has acknowledged is deleted.
    func acknowledge(_ sequences: [UInt64], by sink: String) async throws
}
