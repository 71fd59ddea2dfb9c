/// The connection a message sink delivers through, in sink-neutral terms (docs/architecture.md, "Sinks"): it
/// publishes messages with an id, reports each one acknowledged or refused, subscribes to topic filters and
/// hands over what arrives on them. The MQTT module's `MQTTClient` (libmosquitto) is one; tests use a fake. The
/// delivery owner (`DeliveryDriver`) drives it with the pure `DeliveryMachine`.
///
/// The transport connects and reconnects by itself and reports through the handler it was created with
/// (`TransportEvent`), possibly before `publish` has returned the id it acknowledges. Message ids are unique for
/// the transport's lifetime, not per connection: the owner may still hold ids of a connection that broke (it
/// learns of the break later, through its input queue) while it sends on the next. Subscriptions are not
/// remembered across reconnects: the owner subscribes again after every `.connected`.
public protocol MessageTransport: AnyObject, Sendable {
    /// Starts connecting (and reconnecting until `stop()`).
    func start()
    /// Sends what is queued, disconnects cleanly (bounded) and ends; returns once `.stopped` was reported.
    func stop() async
    /// Queues a message; returns its message id, or why it was not taken (`TransportFailure.permanent`: never).
    func publish(topic: String, payload: String, qos: UInt8, retain: Bool) -> Result<Int32, TransportFailure>
    /// Hands everything published since the last call to the network side at once (one wake-up per batch
    /// instead of one per message). The owner calls it after every input it handled.
    func flush()
    /// Subscribes to a topic filter on the current connection.
    @discardableResult
    func subscribe(_ filter: String, qos: UInt8) -> TransportFailure?
}

/// What a transport reports, on its own thread (handlers must only hand it over, never block).
public enum TransportEvent: Sendable, Equatable {
    /// The peer accepted the connection.
    case connected
    /// An attempt failed before the peer accepted us; retried after `retryIn` s.
    case connectionFailed(TransportFailure, retryIn: Double)
    /// An established connection was lost; reconnecting after `retryIn` s.
    case disconnected(TransportFailure, retryIn: Double)
    /// The peer acknowledged (or, for fire-and-forget messages, the transport sent) the message with this id.
    case acknowledged(messageID: Int32)
    /// The peer answered the message with this id with a failure reason code (0x80 or above in MQTT 5 terms,
    /// e.g. 0x87 not authorized): it was not accepted.
    case refused(messageID: Int32, reasonCode: Int32)
    /// The peer acknowledged a subscription; `messageID` is the transport's id of the request. A subscriber
    /// that must not miss messages waits for this, not for a fixed time.
    case subscribed(messageID: Int32)
    /// A message on a subscribed topic.
    case message(topic: String, payload: [UInt8])
    /// `stop()` finished: the transport's thread has ended.
    case stopped
}

/// Why a transport could not connect, send or subscribe: what was attempted, the transport's own code and
/// words, the peer's refusal code when it refused the connection, and two judgements the owner acts on.
public struct TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport's name in messages (`MQTT`).
    public var transport: String
    /// What was attempted, e.g. `connect to 127.0.0.1:8883`.
    public var operation: String
    /// The transport's own error code (libmosquitto's `MOSQ_ERR_*` for MQTT).
    public var code: Int32
    /// The peer's refusal of the connection (CONNACK return or reason code), when it refused.
    public var refusal: Int32?
    public var message: String
    /// Sending the same message again cannot cure it (too large, invalid topic, unsupported QoS): the owner
    /// passes the message over as refused by the client instead of retrying it.
    public var permanent: Bool
    /// A TLS failure (handshake, certificate verification).
    public var isTLS: Bool

    public init(
        transport: String, operation: String, code: Int32, refusal: Int32? = nil, message: String,
        permanent: Bool = false, isTLS: Bool = false
    ) {
        self.transport = transport
        self.operation = operation
        self.code = code
        self.refusal = refusal
        self.message = message
        self.permanent = permanent
        self.isTLS = isTLS
    }

    /// The peer refused the connection (bad credentials, not authorised, ...).
    public var isRefused: Bool { refusal != nil }

    public var description: String {
        var text = "\(transport) \(operation) failed: \(message)"
        if let refusal { text += " (refusal code \(refusal))" }
        return text
    }
}
