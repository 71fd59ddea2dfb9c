/// A message that is not a sequenced event: availability, Home Assistant discovery configs. Published
/// directly on every connect; never stored in the outbox.
public struct ControlMessage: Sendable, Equatable {
    public var topic: String
    public var payload: String
    public var qos: UInt8
    public var retain: Bool
    public init(topic: String, payload: String, qos: UInt8, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
