import BeaconDelivery
import BeaconEvents

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

    public init(
        settings: MQTTSettings, clientID: String, password: String? = nil, will: ControlMessage? = nil,
        cleanSession: Bool = true
    ) {
        self.settings = settings
        self.clientID = clientID
        self.password = password
        self.will = will
        self.cleanSession = cleanSession
    }
}
