import BeaconConfigReading

extension MQTTSettings {
    /// The `mqtt:` section. Ranges and combinations are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        host = r.string("host", default: host)
        port = r.value("port", default: port)
        clientID = r.string("client_id")
        username = r.string("username")
        passwordFile = r.string("password_file")
        passwordEnv = r.string("password_env")
        if r.entry("password") != nil {
            r.issue(
                "a password does not belong in the configuration file: put it in a file (`password_file`) "
                    + "or an environment variable (`password_env`)", key: "password")
        }
        keepalive = MQTTSettings.wholeSeconds("keepalive_s", default: keepalive, from: &r)
        protocolVersion =
            r.value("protocol", expecting: "3.1.1 or 5") { ProtocolVersion(rawValue: $0) }
            ?? protocolVersion
        reconnectMin = r.duration("reconnect_min_s", default: reconnectMin)
        reconnectMax = r.duration("reconnect_max_s", default: reconnectMax)
        inflightWindow = r.value("inflight_window", default: inflightWindow)
        tls = MQTTTLSSettings.read("tls", from: &r)
    }

    /// A duration that must be a whole number of seconds (e.g. the MQTT keepalive).
    package static func wholeSeconds(_ key: String, default fallback: Int, from r: inout ConfigReader) -> Int {
        guard let seconds = r.duration(key) else { return fallback }
        guard seconds == seconds.rounded(), seconds < Double(Int32.max) else {
            r.issue("must be a whole number of seconds (got \(ConfigDuration.format(seconds: seconds)))", key: key)
            return fallback
        }
        return Int(seconds)
    }
}

extension MQTTTLSSettings {
    /// The system's CA certificates, used by `tls: true`.
    public static let systemCADirectory = "/etc/ssl/certs"

    /// `tls: true` (verify against the system CAs), `tls: false` / absent (plain TCP), or a mapping.
    package static func read(_ key: String, from r: inout ConfigReader) -> MQTTTLSSettings? {
        guard let node = r.node(key) else {
            r.learnKeys(of: key) { readMapping(from: &$0) }
            return nil
        }
        if node.scalar != nil {
            guard let enabled = r.value(key, as: Bool.self) else { return nil }
            return enabled ? MQTTTLSSettings(caDir: systemCADirectory) : nil
        }
        return r.section(key) { readMapping(from: &$0) }
    }

    static func readMapping(from t: inout ConfigReader) -> MQTTTLSSettings {
        var tls = MQTTTLSSettings()
        tls.caFile = t.string("ca_file")
        tls.caDir = t.string("ca_dir")
        tls.certFile = t.string("cert_file")
        tls.keyFile = t.string("key_file")
        tls.verify = t.bool("verify", default: tls.verify)
        tls.verifyHostname = t.bool("verify_hostname", default: tls.verifyHostname)
        tls.version = t.string("version")
        if tls.caFile == nil && tls.caDir == nil && !t.has("ca_file") && !t.has("ca_dir") && !t.isStandIn {
            tls.caDir = systemCADirectory
        }
        return tls
    }
}
