import BeaconConfig
import BeaconConfigReading
import BeaconDelivery
import BeaconRuntime
import BeaconTracking
import HCIScanner
import SQLiteStore
import YAMLConfig

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge check-config [--config FILE]`: validates the configuration and reports every problem at
/// once, one `FILE:LINE:COL: KEYPATH: MESSAGE` line each, on stderr (exit 78, EX_CONFIG), including what the
/// daemon checks at start (`StartupChecks`: the outbox path, the MQTT client's own checks, the layouts);
/// warnings (`... KEYPATH: warning: ...`) do not fail it; a missing or unreadable file, or one that is not a
/// regular file, exits 66 (EX_NOINPUT); a valid file prints a short summary on stdout (exit 0).
enum CheckConfigCommand {
    static let help = """
        Usage: beaconbridge check-config [--config FILE]

        Validates the configuration file and prints every problem as FILE:LINE:COL: KEYPATH: MESSAGE,
        including what the daemon checks at start (the outbox path can hold a database, the MQTT client
        accepts the client id, user name and topics); warnings (a secret file others can read,
        mqtt.tls.verify: false) are printed too but do not fail the check.
        The file is --config FILE, else $BEACONBRIDGE_CONFIG, else \(ConfigurationLoader.defaultPath).
        Exit codes: 0 valid, 64 usage, 66 file missing, unreadable or not a regular file, 78 invalid.
        """

    static func run(_ arguments: [String]) -> Int32 {
        run(arguments, environment: ProcessEnvironment.current(), hostEnvironment: nil)
    }

    static func run(
        _ arguments: [String], environment: [String: String],
        hostEnvironment: ConfigEnvironment?
    ) -> Int32 {
        let location: ConfigLocation
        switch ConfigCommandLine.parse(arguments, command: "check-config", help: help, environment: environment) {
        case .parsed(let parsed): location = parsed.location
        case .exit(let code): return code
        }

        switch location.load(command: "check-config", hostEnvironment: hostEnvironment, startupChecks: true) {
        case .loaded(let configuration):
            Output.stdout(summary(configuration, path: location.path))
            return ExitCode.ok
        case .failed(let exitCode):
            return exitCode
        }
    }

    static func summary(_ c: GatewayConfiguration, path: String, now: Double = SystemClock.realtime()) -> String {
        var lines = ["\(path): configuration is valid"]
        var gateway = "  gateway: id=\(c.gateway.id)"
        if c.gateway.name != c.gateway.id { gateway += " name=\"\(c.gateway.name)\"" }
        if let room = c.gateway.room { gateway += " room=\(room)" }
        lines.append(gateway)
        lines.append("  logging: level=\(c.logging.level.rawValue) format=\(c.logging.format.rawValue)")
        let source = c.scanner.source == .hci ? "adapter \(c.scanner.adapter)" : c.scanner.source.configValue
        lines.append(
            "  scanner: \(source), \(c.scanner.active ? "active" : "passive")"
                + (c.scanner.record.map { ", recording to \($0)" } ?? ""))
        let layouts = c.formats.layouts.map(\.name)
        lines.append(
            "  formats: \(c.formats.enabled.count) built-in"
                + (layouts.isEmpty ? "" : " + " + layouts.joined(separator: ", ")))
        lines.append(
            "  regions: \(c.regions.count)"
                + (c.regions.isEmpty ? "" : " (" + c.regions.map(\.name).joined(separator: ", ") + ")"))
        lines.append(contentsOf: taughtSummary(c))
        lines.append("  beacons: \(c.beacons.count) named")
        lines.append(roomsSummary(c))
        if !c.devices.known.isEmpty {
            lines.append(
                "  devices: \(c.devices.known.count) with identity resolving keys"
                    + (c.devices.publishUnresolved ? ", unresolved private addresses published" : ""))
            let seen = DeviceKeyReport.seenKeys(databasePath: c.outbox.path)
            lines.append(
                contentsOf: DeviceKeyReport.lines(c.devices, seen: seen.rows, now: now, detailed: false)
                    .map { "  " + $0 })
        }
        let scheme = c.mqtt.tls == nil ? "mqtt" : "mqtts"
        var broker = "  broker: \(scheme)://\(c.mqtt.host):\(c.mqtt.port)"
        if let user = c.mqtt.username { broker += " as \(user)" }
        lines.append(broker)
        var topics = "  topics: \(c.topics.prefix)/\(c.gateway.id)/..."
        if c.topics.homeAssistant.enabled { topics += ", Home Assistant discovery" }
        if c.topics.espresense.enabled { topics += ", ESPresense room \(c.topics.espresense.room ?? "?")" }
        lines.append(topics)
        lines.append("  outbox: \(c.outbox.path)")
        lines.append(
            c.telemetry.enabled
                ? "  telemetry: every \(ConfigDuration.format(seconds: c.telemetry.interval))"
                : "  telemetry: off")
        return lines.joined(separator: "\n")
    }

    /// Per region, whether it decides by taught levels (issue 43: `regions teach`) and for which devices on which
    /// gateways, or by its configured numbers; from the database at `outbox.path` when there is one.
    static func taughtSummary(_ c: GatewayConfiguration) -> [String] {
        guard !c.regions.isEmpty, access(c.outbox.path, F_OK) == 0 else { return [] }
        let rows: [StoredTaughtRecord]
        do { rows = try GatewayDatabase(settings: OutboxSettings(path: c.outbox.path)).loadTaughtRecords() } catch {
            return ["    taught: cannot read \(c.outbox.path): \(error)"]
        }
        var book = TaughtBook(site: c.topics.prefix)
        var refused = 0
        let names = Set(c.regions.map(\.name))
        for row in rows {
            switch TaughtRecord.parse(Array(row.payload.utf8), site: c.topics.prefix, regions: names, topic: row.topic)
            {
            case let .success(record): book.put(record)
            case .failure: refused += 1
            }
        }
        var lines: [String] = []
        for region in c.regions {
            let taught = book.sorted.filter { $0.region == region.name && $0.link?.levels != nil }
            if taught.isEmpty {
                lines.append("    \(region.name): configured levels (taught for no device)")
            } else {
                let pairs = taught.map { "\($0.device) on \($0.gateway)" }
                lines.append(
                    "    \(region.name): taught for \(pairs.joined(separator: ", ")); configured levels for the rest")
            }
        }
        let powers = book.sorted.filter { $0.region == nil }
        if !powers.isEmpty {
            lines.append(
                "    reference power taught (1 m) for \(Set(powers.map(\.device)).sorted().joined(separator: ", "))")
        }
        if refused > 0 {
            lines.append("    \(refused) stored taught record(s) do not fit this configuration (ignored)")
        }
        return lines
    }

    /// `  rooms: off`, or the site: its gateways by room, this gateway's room, the rooms without a gateway and the
    /// signal the rule compares.
    static func roomsSummary(_ c: GatewayConfiguration) -> String {
        guard c.rooms.enabled else { return "  rooms: off" }
        let site = c.rooms.gatewayRooms(own: c.gateway)
        let rooms = Set(site.values).sorted()
        var line = "  rooms: \(site.count) gateway(s) in \(rooms.count) room(s) (\(rooms.joined(separator: ", ")))"
        if let own = site[c.gateway.id] { line += ", this gateway in \(own)" }
        if !c.rooms.roomsWithoutGateway.isEmpty {
            line +=
                ", \(c.rooms.roomsWithoutGateway.count) room(s) without a gateway (\(c.rooms.roomsWithoutGateway.sorted().joined(separator: ", ")): named only by the fingerprint classifier, once every room is trained)"
        }
        line += ", signal \(c.rooms.arbiter.useRawRSSI ? "raw" : "smoothed")"
        if let zone = c.rooms.zone(of: c.gateway.id) {
            line +=
                ", zone \(zone.name) of \(c.rooms.zones.count) (\(zone.gateways.count) gateway(s), rooms \(zone.rooms.joined(separator: ", ")))"
        }
        if c.rooms.replayWaitForGateways > 0 {
            line += ", replays wait for \(c.rooms.replayWaitForGateways) gateway(s)"
        }
        return line
    }
}
