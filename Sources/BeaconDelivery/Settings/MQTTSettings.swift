import BeaconConfigReading
import BeaconEvents

/// The `mqtt` section: how to reach the broker. Every key is documented in docs/mqtt.md.
/// Secrets never live here: the password is read from `password_file` or the `password_env` variable.
public struct MQTTSettings: Sendable, Equatable {
    public enum ProtocolVersion: String, Sendable, Equatable {
        case v311 = "3.1.1"
        case v5 = "5"
    }

    /// `mqtt.host`.
    public var host: String
    /// `mqtt.port`.
    public var port: Int
    /// `mqtt.client_id`; nil means `beaconbridge-<gateway_id>`.
    public var clientID: String?
    /// `mqtt.username`.
    public var username: String?
    /// `mqtt.password_file`: file whose content (trailing newline removed) is the password.
    public var passwordFile: String?
    /// `mqtt.password_env`: environment variable holding the password.
    public var passwordEnv: String?
    /// `mqtt.keepalive_s`.
    public var keepalive: Int
    /// `mqtt.protocol`: `3.1.1` or `5`.
    public var protocolVersion: ProtocolVersion
    /// `mqtt.tls`; nil means plain TCP.
    public var tls: MQTTTLSSettings?
    /// `mqtt.reconnect_min_s` / `mqtt.reconnect_max_s`: exponential backoff bounds (jitter is applied);
    /// the cap (default 5 s) bounds how long the gateway stays away after the broker is back.
    public var reconnectMin: Double
    public var reconnectMax: Double
    /// `mqtt.inflight_window`: events sent but not yet acknowledged before new ones go to the outbox.
    public var inflightWindow: Int

    public init(
        host: String = "localhost", port: Int = 1883, clientID: String? = nil, username: String? = nil,
        passwordFile: String? = nil, passwordEnv: String? = nil, keepalive: Int = 30,
        protocolVersion: ProtocolVersion = .v311, tls: MQTTTLSSettings? = nil,
        reconnectMin: Double = 0.5, reconnectMax: Double = 5, inflightWindow: Int = 1000
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.passwordFile = passwordFile
        self.passwordEnv = passwordEnv
        self.keepalive = keepalive
        self.protocolVersion = protocolVersion
        self.tls = tls
        self.reconnectMin = reconnectMin
        self.reconnectMax = reconnectMax
        self.inflightWindow = inflightWindow
    }

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func add(_ key: String, _ message: String) { issues.append(ConfigIssue(path: "mqtt.\(key)", message: message)) }
        if host.isEmpty { add("host", "must not be empty") }
        if !(1...65535).contains(port) { add("port", "must be between 1 and 65535, got \(port)") }
        if let clientID, clientID.isEmpty || clientID.utf8.count > 65535 {
            add("client_id", "must be 1-65535 bytes")
        } else if let clientID, let problem = MQTTString.problem(clientID) {
            add("client_id", problem)
        }
        if let username, let problem = MQTTString.problem(username) { add("username", problem) }
        if passwordFile != nil && passwordEnv != nil {
            add("password_env", "set password_file or password_env, not both")
        }
        if (passwordFile != nil || passwordEnv != nil) && username == nil {
            add("username", "required with a password")
        }
        if !(5...65535).contains(keepalive) { add("keepalive_s", "must be between 5 and 65535, got \(keepalive)") }
        if !(reconnectMin > 0) { add("reconnect_min_s", "must be greater than 0") }
        if !(reconnectMax >= reconnectMin) { add("reconnect_max_s", "must be at least reconnect_min_s") }
        if !(1...65535).contains(inflightWindow) { add("inflight_window", "must be between 1 and 65535") }
        if let tls { issues += tls.validate() }
        return issues
    }
}
