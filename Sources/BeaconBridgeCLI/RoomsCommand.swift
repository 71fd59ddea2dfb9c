import BeaconConfig
import BeaconModel
import BeaconRooms
import BeaconRuntime
import BeaconTracking
import MQTTPublisher
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge rooms status [--config FILE] [--wait S]`: connects to the configured broker as a subscriber,
/// reads the gateways' retained availability and the leader's retained calibration (`<prefix>/rooms/calibration`,
/// docs/rooms.md "Self-calibration"; in a zone, the zone's), and prints a table per gateway, then who leads
/// each zone (`rooms.zones`, docs/rooms.md "Large sites"; the site without zones).
enum RoomsCommand {
    static let help = """
        Usage: beaconbridge rooms status [--config FILE] [--wait S]
               beaconbridge rooms train --room ROOM --device ID [--seconds S] [--gateway G] [--config FILE]
               beaconbridge rooms forget --room ROOM [--gateway G] [--config FILE]

        Connects to the configured broker, reads the site's retained gateway availability and self-calibration,
        and prints one line per gateway: room, zone (with rooms.zones), online, receive and transmit offsets (dB),
        uncertainty (dB), confidence (0-1), pairs, samples; then each zone's leader (the lowest online gateway id
        of the zone; of the site without zones); then who published the calibration and when (in a zone: this
        gateway's zone's calibration and fingerprints); then every room's
        training fingerprint: walks, seconds, gateways that heard it, quality (0-1), age, who published it;
        then what regions were taught (`regions teach`, docs/teach.md). With `site:` in the file, the rooms and
        zones are those of the last committed site configuration joined with the file, as the daemon starts on
        them (the site key must be readable: run it as the service's user or root).
        (`rooms train --help`, `rooms forget --help`: training, docs/rooms.md "Training, step by step".)
        --wait S     wait at most S seconds for the broker and the retained messages (default 5)
        Exit codes: 0 ok, 64 usage, 69 broker unreachable, 78 invalid configuration.
        """

    static func run(_ arguments: [String]) -> Int32 {
        if let verb = arguments.first, RoomCommand.verbs.contains(verb) {
            return RoomsTrainCommand.run(verb: verb, Array(arguments.dropFirst()))
        }
        let request: RetainedMessages.StatusRequest
        do { request = try RetainedMessages.statusRequest(arguments, group: "rooms", help: help) } catch {
            return error.code
        }
        let configuration = siteJoined(request.configuration, path: request.path)
        return AsyncMain.block {
            await status(configuration, password: request.password, wait: request.wait)
        }
    }

    /// With `site:`, the file joined with the last committed site configuration, as the daemon starts on it
    /// (`DaemonSite.prepare`): the rooms and zones of a site usually come from `site.yaml`. The file alone (said
    /// on stderr) when the site key cannot be read; a refused state file is said as the daemon says it.
    static func siteJoined(_ local: GatewayConfiguration, path: String) -> GatewayConfiguration {
        guard local.site != nil else { return local }
        var joined = local
        let logger = Logger(label: "beaconbridge", handler: LogfmtHandler(level: .warning, includesTimestamp: false))
        guard case .success = DaemonSite.prepare(&joined, path: path, logger: logger) else {
            Output.stderr("beaconbridge rooms status: the site configuration is not read; the file's rooms alone")
            return local
        }
        return joined
    }

    static func status(_ configuration: GatewayConfiguration, password: String?, wait: Double) async -> Int32 {
        // In a zone (rooms.zones): the calibration and fingerprints of this gateway's zone.
        let topics = configuration.rooms.topics(prefix: configuration.topics.prefix, own: configuration.gateway)
        let messages: [InboundMessage]
        switch await RetainedMessages.read(
            configuration, password: password,
            filters: [topics.availabilityFilter, topics.calibration, topics.fingerprintFilter]
                + TaughtRecord.filters(prefix: configuration.topics.prefix), wait: wait,
            command: "rooms status")
        {
        case let .success(received): messages = received
        case let .failure(status): return status.code
        }
        var report = RoomsStatus(
            topics: topics, rooms: configuration.rooms.gatewayRooms(own: configuration.gateway),
            zones: configuration.rooms.zones)
        // The taught regions (issue 43) after the rooms: what the site's gateways were taught.
        let taughtPrefix = configuration.topics.prefix + "/regions/"
        for message in messages where !message.topic.hasPrefix(taughtPrefix) { report.take(message) }
        await Output.line(report.table(now: SystemClock.realtime()))
        let arbiter = configuration.rooms.arbiterSettings(own: configuration.gateway)
        await Output.line(
            report.decisionLine(
                gatewayRooms: arbiter.gatewayRooms, withoutGateway: arbiter.roomsWithoutGateway,
                classifier: arbiter.classifier.enabled, rule: arbiter.classifier.rule))
        await Output.line(
            TaughtStatus.table(
                messages: messages.filter { $0.topic.hasPrefix(taughtPrefix) }, site: configuration.topics.prefix,
                regions: Set(configuration.regions.map(\.name))))
        return ExitCode.ok
    }
}
