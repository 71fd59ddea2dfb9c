extension GatewayConfiguration {
    /// Decodes a whole document; the returned value is complete (defaults fill the gaps) even when there are
    /// issues, but callers must not run with it unless `issues` is empty.
    public static func read(_ root: ConfigNode, file: String?,
                            environment: ConfigEnvironment) -> (value: GatewayConfiguration, issues: [ConfigIssue]) {
        ConfigReader.read(root, file: file) { r in GatewayConfiguration(from: &r, environment: environment) }
    }

    public init(from r: inout ConfigReader, environment: ConfigEnvironment) {
        gateway = r.section("gateway") { GatewaySettings(from: &$0, hostname: environment.hostname) }
        logging = r.section("logging") { LoggingSettings(from: &$0) }
        telemetry = r.section("telemetry") { TelemetrySettings(from: &$0) }
        unvalidatedSections = GatewayConfiguration.pendingSectionNames.filter { r.has($0) }
        // Declared so a typo of any section name gets the hint, and pending sections are not "unknown".
        r.declare(GatewayConfiguration.sectionNames)
    }
}

extension GatewaySettings {
    public init(from r: inout ConfigReader, hostname: String) {
        let fallback = GatewaySettings.identifier(fromHostname: hostname)
        let id = r.string("id", default: fallback)
        if id != fallback, !GatewaySettings.isValidIdentifier(id) {
            r.issue("`\(id)` is not a valid id (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic level)",
                    key: "id")
        }
        let room = r.string("room")
        if let room, !GatewaySettings.isValidIdentifier(room) {
            r.issue("`\(room)` is not a valid room (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic "
                    + "level)", key: "room")
        }
        let name = r.string("name")
        if name?.isEmpty == true { r.issue("must not be empty", key: "name") }
        self.init(id: id, name: name.flatMap { $0.isEmpty ? nil : $0 }, room: room)
    }
}

extension LoggingSettings {
    public init(from r: inout ConfigReader) {
        self.init(level: r.choice("level", default: Level.info),
                  format: r.choice("format", default: Format.logfmt))
    }
}

extension TelemetrySettings {
    public init(from r: inout ConfigReader) {
        let defaults = TelemetrySettings()
        self.init(enabled: r.bool("enabled", default: defaults.enabled),
                  interval: r.duration("interval_s", default: defaults.interval, in: 5...86_400))
    }
}
