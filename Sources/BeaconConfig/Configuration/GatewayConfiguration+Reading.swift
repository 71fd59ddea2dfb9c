import BeaconConfigReading
import BeaconDelivery
import BeaconEvents
import BeaconFormats
import BeaconModel
import BeaconRooms
import BeaconTracking
import DeviceProtocols

extension GatewayConfiguration {
    /// Decodes a whole document; the returned value is complete (defaults fill the gaps) even when there are
    /// issues, but callers must not run with it unless `issues` is empty.
    public static func read(
        _ root: ConfigNode, file: String?,
        environment: ConfigEnvironment
    ) -> (value: GatewayConfiguration, issues: [ConfigIssue]) {
        ConfigReader.read(root, file: file) { r in GatewayConfiguration(from: &r, environment: environment) }
    }

    /// Reads every section, then checks each with its owner's `validate()` and the sections against each other.
    public init(from r: inout ConfigReader, environment: ConfigEnvironment) {
        gateway = r.section("gateway") { GatewaySettings(from: &$0, hostname: environment.hostname) }
        logging = r.section("logging") { LoggingSettings(from: &$0) }
        telemetry = r.section("telemetry") { TelemetrySettings(from: &$0) }
        scanner = r.section("scanner") { ScannerSettings(from: &$0) }
        formats = r.section("formats") { FormatSettings(from: &$0) }
        distance = r.section("distance") { DistanceSettings(from: &$0) }
        tracking = r.section("tracking") { TrackerSettings(from: &$0) }
        let inherited = tracking.sensitivity
        regions = r.list("regions") { RegionRule(from: &$0, inherited: inherited) }
        beacons = r.list("beacons") { KnownBeacon(from: &$0) }
        devices = r.section("devices") { PrivateDeviceSettings(from: &$0) }
        mqtt = r.section("mqtt") { MQTTSettings(from: &$0) }
        topics = r.section("topics") { TopicSettings(from: &$0) }
        outbox = r.section("outbox") { OutboxSettings(from: &$0) }
        webhook = r.optionalSection("webhook") { WebhookSettings(from: &$0) }
        esphomeAPI = r.section("esphome_api") { ESPHomeAPISettings(from: &$0) }
        rooms = r.section("rooms") { RoomSettings(from: &$0) }
        gatt = r.section("gatt") { GATTSettings(from: &$0) }
        http = r.section("http") { HTTPSettings(from: &$0) }
        site = r.optionalSection("site") { SiteSettings(from: &$0) }
        // Declared so a typo of any section name gets the hint.
        r.declare(GatewayConfiguration.sectionNames)
        // `x-...` keys hold YAML anchors for reuse (`x-defaults: &defaults`), as in Docker Compose files.
        r.ignore(r.entries.map(\.key).filter { $0.hasPrefix("x-") })

        // The ESPresense room is the gateway's room unless set on its own.
        if topics.espresense.room == nil { topics.espresense.room = gateway.room }
        // Per-device away timeouts are the tracker's to apply.
        tracking.awayTimeoutOverrides = devices.awayTimeouts

        r.report(scanner.validate(path: "scanner"))
        r.report(formats.validate())
        r.report(distance.validate())
        r.report(tracking.validate(path: "tracking"))
        r.report(RegionRule.validate(regions, path: "regions"))
        r.report(KnownBeacon.validate(beacons, path: "beacons"))
        r.report(devices.validate(path: "devices"))
        r.report(mqtt.validate())
        r.report(topics.validate())
        r.report(outbox.validate())
        if let webhook { r.report(webhook.validate()) }
        r.report(esphomeAPI.validate())
        r.report(rooms.validate(gateway: gateway))
        r.report(gatt.validate())
        r.report(http.validate())
        r.report(crossSectionIssues())
    }

    /// References between sections: format names used in regions, beacon ids and measured powers must exist.
    func crossSectionIssues() -> [ConfigIssue] {
        // `irk` is the format of devices resolved through their keys (`devices`).
        let known = formats.knownFormatNames + [PrivateDevice.format]
        let disabled = Set(FormatRegistry.names).subtracting(formats.enabled)
        func unknown(_ name: String) -> String? {
            let lower = name.lowercased()
            if disabled.contains(lower) {
                return "format `\(lower)` is not in formats.enabled, so nothing would ever match it"
            }
            guard !known.contains(lower) else { return nil }
            return "unknown format `\(name)`\(KeySuggestion.hint(for: name, among: known)) (built-in formats and "
                + "formats.layouts names)"
        }
        var issues: [ConfigIssue] = []
        for (index, region) in regions.enumerated() {
            if let format = region.match.format, format != "*", let problem = unknown(format) {
                issues.append(ConfigIssue(path: "regions[\(index)].match.format", message: problem))
            }
        }
        let deviceIDs = Set(devices.known.map(\.beaconID))
        for (index, beacon) in beacons.enumerated() {
            if let format = beacon.formatName, let problem = unknown(format) {
                issues.append(ConfigIssue(path: "beacons[\(index)].id", message: problem))
            } else if beacon.formatName == PrivateDevice.format, !deviceIDs.contains(beacon.id) {
                issues.append(
                    ConfigIssue(
                        path: "beacons[\(index)].id",
                        message: "`\(beacon.id)` names no device of "
                            + "devices.known (irk ids are irk:<device name>)"))
            }
        }
        for format in distance.measuredPower.keys.sorted() {
            if let problem = unknown(format) {
                issues.append(ConfigIssue(path: "distance.measured_power.\(format)", message: problem))
            }
        }
        return issues
    }
}

extension GatewaySettings {
    public init(from r: inout ConfigReader, hostname: String) {
        let fallback = GatewaySettings.identifier(fromHostname: hostname)
        let id = r.string("id", default: fallback)
        if id != fallback, !GatewaySettings.isValidIdentifier(id) {
            r.issue(
                "`\(id)` is not a valid id (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic level)",
                key: "id")
        }
        let room = r.string("room")
        if let room, !GatewaySettings.isValidIdentifier(room) {
            r.issue(
                "`\(room)` is not a valid room (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic "
                    + "level)", key: "room")
        }
        let name = r.string("name")
        if name?.isEmpty == true { r.issue("must not be empty", key: "name") }
        self.init(id: id, name: name.flatMap { $0.isEmpty ? nil : $0 }, room: room)
    }
}

extension LoggingSettings {
    public init(from r: inout ConfigReader) {
        self.init(
            level: r.choice("level", default: Level.info),
            format: r.choice("format", default: Format.logfmt))
    }
}

extension TelemetrySettings {
    public init(from r: inout ConfigReader) {
        let defaults = TelemetrySettings()
        self.init(
            enabled: r.bool("enabled", default: defaults.enabled),
            interval: r.duration("interval_s", default: defaults.interval, in: 5...86_400))
    }
}
