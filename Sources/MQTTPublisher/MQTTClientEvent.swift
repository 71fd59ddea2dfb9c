import BeaconCore

/// What the client reports, delivered on its network thread (handlers must only hand it over, never block).
public enum MQTTClientEvent: Sendable, Equatable {
    /// The broker accepted the connection (CONNACK success).
    case connected
    /// An attempt failed before the broker accepted us (TCP, TLS, refused CONNACK); retried after `retryIn` s.
    case connectionFailed(MQTTError, retryIn: Double)
    /// An established connection was lost; reconnecting after `retryIn` s.
    case disconnected(MQTTError, retryIn: Double)
    /// The broker acknowledged (QoS 1/2) or the client sent (QoS 0) the message with this id.
    case acknowledged(messageID: Int32)
    /// A message on a subscribed topic.
    case message(topic: String, payload: [UInt8])
    /// `stop()` finished: the network thread has ended.
    case stopped
}

/// Everything the client needs to connect, resolved from configuration (the password already read).
public struct MQTTClientOptions: Sendable {
    public var settings: MQTTSettings
    public var clientID: String
    /// Never logged, never in an error message.
    public var password: String?
    /// The last will, e.g. `offline` retained on the availability topic.
    public var will: ControlMessage?
    /// MQTT clean session / clean start. The gateway uses a clean session (its outbox is its memory);
    /// a persistent session serves subscribers that must not miss messages while away.
    public var cleanSession: Bool

    public init(settings: MQTTSettings, clientID: String, password: String? = nil, will: ControlMessage? = nil,
                cleanSession: Bool = true) {
        self.settings = settings
        self.clientID = clientID
        self.password = password
        self.will = will
        self.cleanSession = cleanSession
    }
}
