import BeaconConfigReading
import BeaconModel

/// The `site:` section of a gateway's own (local) file: which site configuration it follows and how
/// (docs/site-config.md). Absent: the gateway runs on its local file alone and subscribes to nothing.
public struct SiteSettings: Sendable, Equatable {
    /// The site's id: a topic level (`<prefix>/<id>/site/config`) and part of what is signed.
    public var id: String
    /// The file holding the site's HMAC key (at least 32 bytes); never the key itself.
    public var keyFile: String
    /// Seconds after applying a pushed configuration within which the gateway must talk to the broker again
    /// (a round trip of its `applying` status); otherwise it rolls back.
    public var applyTimeout: Double
    /// The largest envelope (JSON bytes) a gateway reads; anything larger is refused unread.
    public var maxBytes: Int
    /// Where the last committed site configuration is kept (the signed envelope), so a restart comes back on it.
    public var stateFile: String

    public static let defaultStateFile = "/var/lib/beaconbridge/site-state.json"
    public static let defaultApplyTimeout = 30.0
    public static let defaultMaxBytes = 262_144
    /// The bounds of `max_bytes`: room for a small site, at most the YAML loader's own bound (1 MiB).
    public static let maxBytesRange = 1_024...1_048_576

    public init(
        id: String, keyFile: String, applyTimeout: Double = SiteSettings.defaultApplyTimeout,
        maxBytes: Int = SiteSettings.defaultMaxBytes, stateFile: String = SiteSettings.defaultStateFile
    ) {
        self.stateFile = stateFile
        self.id = id
        self.keyFile = keyFile
        self.applyTimeout = applyTimeout
        self.maxBytes = maxBytes
    }

    /// The sections a site configuration may set: those a reload applies (SIGHUP). Everything else is the
    /// gateway's own.
    public static let sharedSections = [
        "formats", "distance", "tracking", "regions", "beacons", "devices", "telemetry", "rooms",
    ]

    /// The sections that only a gateway's own file may set: its identity, broker, radio, storage, sinks,
    /// servers, logging and this section.
    public static let localSections = [
        "gateway", "logging", "scanner", "mqtt", "topics", "outbox", "webhook", "esphome_api", "gatt", "site",
    ]
}

extension SiteSettings {
    public init(from r: inout ConfigReader) {
        let id = r.string("id") ?? ""
        if id.isEmpty {
            r.issue("the site needs an id (1-64 letters, digits, `_` or `-`)", key: "id")
        } else if !GatewaySettings.isValidIdentifier(id) {
            r.issue(
                "`\(id)` is not a valid site id (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic level)",
                key: "id")
        }
        let keyFile = r.string("key_file") ?? ""
        if keyFile.isEmpty {
            r.issue("the site needs `key_file`: the file holding the site's key (docs/site-config.md)", key: "key_file")
        } else if !keyFile.hasPrefix("/") {
            r.issue("`\(keyFile)` must be an absolute path (the service runs from /)", key: "key_file")
        }
        if r.entry("key") != nil {
            r.issue("the site key does not belong in the configuration file: put it in a file (`key_file`)", key: "key")
        }
        let stateFile = r.string("state_file", default: SiteSettings.defaultStateFile)
        if !stateFile.hasPrefix("/") {
            r.issue("`\(stateFile)` must be an absolute path (the service runs from /)", key: "state_file")
        }
        self.init(
            id: id, keyFile: keyFile,
            applyTimeout: r.duration("apply_timeout_s", default: SiteSettings.defaultApplyTimeout, in: 5...600),
            maxBytes: r.int("max_bytes", default: SiteSettings.defaultMaxBytes, in: SiteSettings.maxBytesRange),
            stateFile: stateFile)
    }
}
