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
    /// The broker answered the message with this id with an MQTT 5 failure reason code (0x80 or above, e.g.
    /// 0x87 not authorized): it was not accepted.
    case refused(messageID: Int32, reasonCode: Int32)
    /// The broker acknowledged a subscription (SUBACK); `messageID` is libmosquitto's id of the SUBSCRIBE.
    /// A subscriber that must not miss messages waits for this, not for a fixed time.
    case subscribed(messageID: Int32)
    /// A message on a subscribed topic.
    case message(topic: String, payload: [UInt8])
    /// `stop()` finished: the network thread has ended.
    case stopped
}
