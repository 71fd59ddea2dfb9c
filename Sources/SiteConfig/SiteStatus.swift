import BeaconModel

/// What a gateway publishes retained on `<prefix>/<site>/site/status/<gateway>` after every decision on a site
/// configuration (docs/site-config.md), and what `beaconbridge site status` reads back.
public struct SiteStatus: Sendable, Equatable {
    public enum State: String, Sendable, Equatable, CaseIterable {
        /// Applied; waiting for the broker round trip that commits it.
        case applying
        /// Committed: the gateway runs this version.
        case applied
        /// Refused; the gateway runs `version` still.
        case refused
        /// Applied, then rolled back (the broker could not be reached within `apply_timeout_s`).
        case rolledBack = "rolled_back"
        /// No site configuration accepted yet: the local file alone.
        case local
    }

    public var gateway: String
    public var site: String
    /// The version running (0: the local file alone) and its YAML's hash.
    public var version: Int64
    public var sha256: String
    public var state: State
    /// The version the decision was about (for `refused` and `rolled_back`: not the running one).
    public var subject: Int64?
    /// The refusal's code (`SiteRefusal.Reason`, or `broker_unreachable`) and message.
    public var reason: String?
    public var message: String?
    /// Seconds since the Unix epoch of the decision.
    public var time: Double

    public init(
        gateway: String, site: String, version: Int64, sha256: String, state: State, subject: Int64? = nil,
        reason: String? = nil, message: String? = nil, time: Double
    ) {
        self.gateway = gateway
        self.site = site
        self.version = version
        self.sha256 = sha256
        self.state = state
        self.subject = subject
        self.reason = reason
        self.message = message
        self.time = time
    }

    public var json: String {
        var members: [(String, JSONValue)] = [
            ("gateway", .string(gateway)), ("site", .string(site)), ("version", .int(version)),
            ("sha256", .string(sha256)), ("state", .string(state.rawValue)),
        ]
        if let subject { members.append(("subject", .int(subject))) }
        if let reason { members.append(("reason", .string(reason))) }
        if let message { members.append(("message", .string(message))) }
        members.append(("time", .double(time)))
        return JSONValue.object(members).serialized
    }

    /// Reads a status payload; nil when it is not one (the table shows such a gateway as unreadable).
    public static func parse(_ payload: [UInt8]) -> SiteStatus? {
        guard payload.count <= 65_536, let text = String(validating: payload, as: UTF8.self),
            let value = try? JSONValue(parsing: text, maxDepth: 4),
            case .string(let gateway)? = value["gateway"], case .string(let site)? = value["site"],
            case .int(let version)? = value["version"], case .string(let sha256)? = value["sha256"],
            case .string(let stateText)? = value["state"], let state = State(rawValue: stateText)
        else { return nil }
        var time = 0.0
        switch value["time"] {
        case .double(let t)?: time = t
        case .int(let t)?: time = Double(t)
        default: break
        }
        var subject: Int64?
        if case .int(let s)? = value["subject"] { subject = s }
        var reason: String?
        if case .string(let r)? = value["reason"] { reason = r }
        var message: String?
        if case .string(let m)? = value["message"] { message = m }
        return SiteStatus(
            gateway: gateway, site: site, version: version, sha256: sha256, state: state, subject: subject,
            reason: reason, message: message, time: time)
    }
}

/// The site configuration's topics under `topics.prefix` (docs/mqtt.md): the operator publishes
/// `<prefix>/<site>/site/config`, each gateway `<prefix>/<site>/site/status/<gateway>`, so a broker ACL can
/// give the first to the operator alone and each status topic to its gateway.
public struct SiteTopics: Sendable, Equatable {
    public var prefix: String
    public var site: String

    public init(prefix: String, site: String) {
        self.prefix = prefix
        self.site = site
    }

    public var config: String { "\(prefix)/\(TopicLevel.safe(site))/site/config" }
    public func status(gateway: String) -> String {
        "\(prefix)/\(TopicLevel.safe(site))/site/status/\(TopicLevel.safe(gateway))"
    }
    public var statusFilter: String { "\(prefix)/\(TopicLevel.safe(site))/site/status/+" }
}
