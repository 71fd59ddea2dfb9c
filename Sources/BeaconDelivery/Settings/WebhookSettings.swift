import BeaconConfigReading
import BeaconEvents

/// The `webhook` section: a second sink that POSTs the same JSON events as MQTT to an HTTP(S) URL, from its own
/// outbox cursor (docs/webhook.md; every key is in docs/configuration.md). Absent: no webhook. The token never
/// lives here: it is read from `token_file` or the `token_env` variable and never logged.
public struct WebhookSettings: Sendable, Equatable {
    /// One extra request header (`webhook.headers`).
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `webhook.url`: `http://` or `https://` URL the events are POSTed to.
    public var url: String
    /// `webhook.headers`: extra request headers (name: value), e.g. a routing key; not for secrets.
    public var headers: [Header]
    /// `webhook.token_file`: file whose content (trailing newline removed) is sent as `Authorization: Bearer`.
    public var tokenFile: String?
    /// `webhook.token_env`: environment variable holding that token.
    public var tokenEnv: String?
    /// `webhook.ca_file`: PEM file of the CA(s) that sign the server's certificate (default: the system's).
    public var caFile: String?
    /// `webhook.timeout_s`: a whole request, connect included.
    public var timeout: Double
    /// `webhook.retry_min_s` / `webhook.retry_max_s`: the backoff after a failed POST doubles from the first to
    /// the second.
    public var retryMin: Double
    public var retryMax: Double
    /// `webhook.batch_size`: events per POST, sent as one JSON array in sequence order.
    public var batchSize: Int
    /// `webhook.kinds`: the event kinds sent; the others are passed over (acknowledged without a request).
    public var kinds: [EventKind]

    /// The kinds sent by default: the decisions, not the raw sightings.
    public static let defaultKinds: [EventKind] = [.presence, .region, .room]

    public init(
        url: String, headers: [Header] = [], tokenFile: String? = nil, tokenEnv: String? = nil,
        caFile: String? = nil, timeout: Double = 10, retryMin: Double = 1, retryMax: Double = 60,
        batchSize: Int = 20, kinds: [EventKind] = WebhookSettings.defaultKinds
    ) {
        self.url = url
        self.headers = headers
        self.tokenFile = tokenFile
        self.tokenEnv = tokenEnv
        self.caFile = caFile
        self.timeout = timeout
        self.retryMin = retryMin
        self.retryMax = retryMax
        self.batchSize = batchSize
        self.kinds = kinds
    }

    /// Whether the URL uses TLS.
    public var isHTTPS: Bool { url.lowercased().hasPrefix("https://") }

    public func validate(path: String = "webhook") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func add(_ key: String, _ message: String) {
            issues.append(ConfigIssue(path: "\(path).\(key)", message: message))
        }
        let lower = url.lowercased()
        if !(lower.hasPrefix("http://") || lower.hasPrefix("https://")) || url.count <= "https://".count
            || url.contains(where: { $0 == " " || $0 == "\n" || $0 == "\r" })
        {
            add("url", "`\(url)` is not an http:// or https:// URL")
        }
        if url.split(separator: "/", maxSplits: 3).dropFirst().first?.contains("@") == true {
            add("url", "credentials do not belong in the URL: put a token in token_file or token_env")
        }
        for header in headers {
            let tokenChars = header.name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }
            if header.name.isEmpty || !tokenChars {
                add("headers.\(header.name)", "is not a header name (letters, digits, `-` or `_`)")
            }
            if header.value.contains(where: { $0 == "\n" || $0 == "\r" }) {
                add("headers.\(header.name)", "a header value must be one line")
            }
            if header.name.lowercased() == "authorization" {
                add(
                    "headers.\(header.name)",
                    "a secret does not belong in the configuration file: use token_file or token_env")
            }
        }
        if tokenFile != nil, tokenEnv != nil { add("token_env", "set token_file or token_env, not both") }
        for (key, file) in [("token_file", tokenFile), ("ca_file", caFile)] {
            if let file, !file.hasPrefix("/") { add(key, "must be an absolute path") }
        }
        if caFile != nil, !isHTTPS { add("ca_file", "only used with an https:// url") }
        if !(timeout >= 1 && timeout <= 300) { add("timeout_s", "must be between 1 s and 300 s") }
        if !(retryMin > 0 && retryMin <= 3600) { add("retry_min_s", "must be greater than 0 and at most 3600 s") }
        if !(retryMax >= retryMin && retryMax <= 86_400) {
            add("retry_max_s", "must be at least retry_min_s and at most 86400 s")
        }
        if !(1...1000).contains(batchSize) { add("batch_size", "must be between 1 and 1000") }
        if kinds.isEmpty { add("kinds", "must name at least one event kind") }
        return issues
    }
}

extension WebhookSettings {
    /// The URL for a log line: its query (which may carry a key) cut off.
    public static func redacted(_ url: String) -> String {
        guard let mark = url.firstIndex(of: "?") else { return url }
        return String(url[..<mark]) + "?..."
    }
}
