/// How one kind of event is published.
public struct DeliveryPolicy: Sendable, Equatable {
    /// MQTT QoS, 0...2.
    public var qos: UInt8
    public var retain: Bool
    public init(qos: UInt8, retain: Bool) {
        self.qos = qos
        self.retain = retain
    }
}
