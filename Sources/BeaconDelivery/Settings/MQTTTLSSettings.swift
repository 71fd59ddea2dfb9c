import BeaconConfigReading

/// `mqtt.tls`: TLS to the broker. Certificate verification is on unless `verify: false`.
public struct MQTTTLSSettings: Sendable, Equatable {
    /// `mqtt.tls.ca_file` / `mqtt.tls.ca_dir`: trusted CA certificates (PEM file, or an OpenSSL hashed dir).
    public var caFile: String?
    public var caDir: String?
    /// `mqtt.tls.cert_file` / `mqtt.tls.key_file`: client certificate and its unencrypted key (PEM).
    public var certFile: String?
    public var keyFile: String?
    /// `mqtt.tls.verify`: verify the broker's certificate chain.
    public var verify: Bool
    /// `mqtt.tls.verify_hostname`: check the certificate names `mqtt.host`.
    public var verifyHostname: Bool
    /// `mqtt.tls.version`: e.g. `tlsv1.3`; nil lets OpenSSL choose (TLS 1.2 or later).
    public var version: String?

    public init(
        caFile: String? = nil, caDir: String? = nil, certFile: String? = nil, keyFile: String? = nil,
        verify: Bool = true, verifyHostname: Bool = true, version: String? = nil
    ) {
        self.caFile = caFile
        self.caDir = caDir
        self.certFile = certFile
        self.keyFile = keyFile
        self.verify = verify
        self.verifyHostname = verifyHostname
        self.version = version
    }

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if caFile == nil && caDir == nil {
            issues.append(ConfigIssue(path: "mqtt.tls.ca_file", message: "set ca_file or ca_dir"))
        }
        if (certFile == nil) != (keyFile == nil) {
            issues.append(
                ConfigIssue(
                    path: certFile == nil ? "mqtt.tls.cert_file" : "mqtt.tls.key_file",
                    message: "cert_file and key_file go together"))
        }
        if let version, !["tlsv1.2", "tlsv1.3"].contains(version) {
            issues.append(ConfigIssue(path: "mqtt.tls.version", message: "must be tlsv1.2 or tlsv1.3"))
        }
        return issues
    }
}
