import BeaconConfigReading
import BeaconModel
import DeviceProtocols

/// The `http:` section: the status page and Prometheus' `/metrics` (docs/status-page.md). Off by default; on a
/// loopback address unless told otherwise, where no read token is needed; anywhere else a read token is required.
/// Actions (starting a room training) need the separate action token and are off without one. Tokens come from
/// files or environment variables, never from this file, argv or a log line. Every key is documented in
/// docs/configuration.md.
public struct HTTPSettings: Sendable, Equatable {
    /// `http.enabled`
    public var enabled = false
    /// `http.listen`: the address to listen on (`127.0.0.1`, `::1`, `0.0.0.0`, `::`).
    public var listen = "127.0.0.1"
    /// `http.port`
    public var port = 9120
    /// `http.token_file` / `token_env`: the read token (the page and `/metrics`).
    public var tokenFile: String?
    public var tokenEnv: String?
    /// `http.action_token_file` / `action_token_env`: the token for actions (POST).
    public var actionTokenFile: String?
    public var actionTokenEnv: String?
    /// `http.max_connections`: open at once; one more is answered 503.
    public var maxConnections = 16
    /// `http.request_timeout_s`: from a connection's accept to its complete request (slow clients are cut off).
    public var requestTimeout: Double = 10
    /// `http.max_header_bytes`: the request line and headers together.
    public var maxHeaderBytes = 8192
    /// `http.max_body_bytes`: a POST's body.
    public var maxBodyBytes = 4096

    public init() {}

    /// Whether `listen` is a loopback address (127.0.0.0/8 or ::1).
    public var listensOnLoopback: Bool {
        guard let bytes = NetworkAddressRange.parseAddress(listen) else { return false }
        if bytes.count == 4 { return bytes[0] == 127 }
        return bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    public func validate(path: String = "http") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if !(1...65_535).contains(port) { issues.append(ConfigIssue(path: "\(path).port", message: "must be 1-65535")) }
        if NetworkAddressRange.parseAddress(listen) == nil {
            issues.append(
                ConfigIssue(path: "\(path).listen", message: "`\(listen)` is not an IPv4 or IPv6 address"))
        }
        for (file, env, key) in [(tokenFile, tokenEnv, "token"), (actionTokenFile, actionTokenEnv, "action_token")] {
            if file != nil, env != nil {
                issues.append(
                    ConfigIssue(path: "\(path).\(key)_env", message: "set \(key)_file or \(key)_env, not both"))
            }
            if let file, !file.hasPrefix("/") {
                issues.append(ConfigIssue(path: "\(path).\(key)_file", message: "must be an absolute path"))
            }
        }
        if enabled, !listensOnLoopback, tokenFile == nil, tokenEnv == nil {
            issues.append(
                ConfigIssue(
                    path: "\(path).token_file",
                    message: "needed when http.listen (`\(listen)`) is not a loopback address: anyone on the "
                        + "network could read the page and the metrics"))
        }
        if !(1...256).contains(maxConnections) {
            issues.append(ConfigIssue(path: "\(path).max_connections", message: "must be between 1 and 256"))
        }
        if !(1...300).contains(requestTimeout) {
            issues.append(ConfigIssue(path: "\(path).request_timeout_s", message: "must be between 1 s and 300 s"))
        }
        if !(1024...(64 * 1024)).contains(maxHeaderBytes) {
            issues.append(ConfigIssue(path: "\(path).max_header_bytes", message: "must be between 1 KiB and 64 KiB"))
        }
        if !(0...(1024 * 1024)).contains(maxBodyBytes) {
            issues.append(ConfigIssue(path: "\(path).max_body_bytes", message: "must be between 0 and 1 MiB"))
        }
        return issues
    }
}

extension HTTPSettings {
    /// The `http:` section. Ranges are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.bool("enabled", default: enabled)
        listen = r.string("listen", default: listen)
        port = r.value("port", default: port)
        tokenFile = r.string("token_file")
        tokenEnv = r.string("token_env")
        actionTokenFile = r.string("action_token_file")
        actionTokenEnv = r.string("action_token_env")
        for secret in ["token", "action_token"] where r.entry(secret) != nil {
            r.issue(
                "a secret does not belong in the configuration file: put it in a file (`\(secret)_file`) or an "
                    + "environment variable (`\(secret)_env`)", key: secret)
        }
        maxConnections = r.value("max_connections", default: maxConnections)
        requestTimeout = r.duration("request_timeout_s", default: requestTimeout)
        maxHeaderBytes = r.value("max_header_bytes", as: ConfigByteSize.self)?.bytes ?? maxHeaderBytes
        maxBodyBytes = r.value("max_body_bytes", as: ConfigByteSize.self)?.bytes ?? maxBodyBytes
    }
}
