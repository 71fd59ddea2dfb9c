import BeaconConfig
import BeaconRooms
import BeaconRuntime
import BeaconTracking
import StatusServer
import Synchronization

/// The status page and `/metrics` beside the daemon (`http`, docs/status-page.md): the server is started before
/// the source and stopped after the loop; the loop copies its figures to the board once a second
/// (`publishStatus`).
struct DaemonStatus {
    let server: StatusHTTPServer
    let board: StatusBoard
    /// The action token is set (the page shows its forms).
    let actionsEnabled: Bool
    /// The listed beacons' RSSI, kept only while the page is viewed; sampled at most once a second (wall time).
    var history = RSSIHistory()
    var lastSample = -Double.infinity

    /// nil when `http.enabled` is false. A token that cannot be read or an address that cannot be bound is an
    /// error: the daemon does not start without it.
    static func start(configuration: GatewayConfiguration, environment: [String: String], logger: Logger)
        -> Result<DaemonStatus?, DaemonStartError>
    {
        let settings = configuration.http
        guard settings.enabled else { return .success(nil) }
        var tokens: [String?] = []
        for (file, env, key) in [
            (settings.tokenFile, settings.tokenEnv, "token"),
            (settings.actionTokenFile, settings.actionTokenEnv, "action_token"),
        ] {
            switch secret(file: file, env: env, environment: environment, key: key) {
            case let .failure(error): return .failure(error)
            case let .success(value): tokens.append(value)
            }
        }
        let board = StatusBoard()
        // Before the loop's first copy (within a second): the gateway's name, zeros elsewhere.
        var first = StatusSnapshot()
        first.gatewayID = configuration.gateway.id
        first.actionsEnabled = tokens[1] != nil
        first.regionNames = configuration.regions.map(\.name).sorted()
        board.publish(first)
        let counters = Mutex<StatusHTTPServer?>(nil)
        let routes = StatusRoutes(
            board: board, access: HTTPAccess(readToken: tokens[0], actionToken: tokens[1]),
            httpCounters: { counters.withLock { $0 }?.counters.snapshot ?? StatusHTTPCounters.Snapshot() })
        let server = StatusHTTPServer(
            configuration: StatusHTTPServer.Configuration(
                address: settings.listen, port: settings.port, maxConnections: settings.maxConnections,
                requestTimeout: settings.requestTimeout,
                limits: HTTPRequestParser.Limits(headerBytes: settings.maxHeaderBytes, bodyBytes: settings.maxBodyBytes)
            ),
            handler: { routes.respond(to: $0) })
        counters.withLock { $0 = server }
        do throws(StatusHTTPServer.StartFailure) { try server.start() } catch {
            return .failure(
                DaemonStartError(
                    message: "http: cannot listen on \(settings.listen):\(settings.port): \(error)",
                    exitCode: ExitCode.unavailable))
        }
        logger.child(label: "http").notice(
            "status page listening",
            metadata: [
                "address": "\(settings.listen)", "port": "\(server.port)",
                "read_token": "\(tokens[0] == nil ? "none" : "set")",
                "actions": "\(tokens[1] == nil ? "off" : "on")",
            ])
        return .success(DaemonStatus(server: server, board: board, actionsEnabled: tokens[1] != nil))
    }

    /// A token from its file or variable (trailing newlines dropped), nil when neither is set; never logged.
    static func secret(file: String?, env: String?, environment: [String: String], key: String)
        -> Result<String?, DaemonStartError>
    {
        var text: String
        if let env {
            guard let value = environment[env] else {
                return .failure(DaemonStartError(message: "http.\(key)_env: environment variable \(env) is not set"))
            }
            text = value
        } else if let file {
            guard let value = LocalFiles.read(file, maxBytes: 4096) else {
                return .failure(
                    DaemonStartError(
                        message:
                            "http.\(key)_file: cannot read `\(file)` (missing, unreadable or larger than 4096 bytes)"))
            }
            text = value
        } else {
            return .success(nil)
        }
        while let last = text.last, last == "\n" || last == "\r" { text.removeLast() }
        guard !text.isEmpty else {
            return .failure(DaemonStartError(message: "http.\(key)_\(env == nil ? "file" : "env"): the token is empty"))
        }
        return .success(text)
    }
}

/// A part the daemon could not start: the message for stderr and the exit code.
struct DaemonStartError: Error, CustomStringConvertible {
    let message: String
    var exitCode: Int32 = ExitCode.config
    var description: String { message }
}

extension DaemonStatus {
    /// A reply to a rooms or regions command, for the page (the loop).
    func noteActionReply(_ payload: String) { board.noteReply(payload) }
}

extension Daemon {
    /// Copies the loop's figures to the status board (once a second, and at the end of a replay); nothing when
    /// `http` is off.
    func publishStatus() async {
        guard status != nil else { return }
        let counters = publisher.counters
        let source = source.statistics
        var s = StatusSnapshot()
        s.gatewayID = configuration.gateway.id
        s.isReplay = isReplay
        s.clock = clock
        s.uptime = SystemClock.monotonic() - telemetry.startedAt
        s.hciEvents = pipeline.counters.hciEvents
        s.reports = pipeline.counters.reports
        s.beaconObservations = pipeline.counters.beacons
        s.malformedEvents = pipeline.counters.malformedEvents
        s.sourceDropped = source.dropped
        s.unresolvedPrivateReports = pipeline.counters.unresolvedPrivateReports
        s.replayedFrames = pipeline.counters.replayedFrames
        s.resolvedReports = pipeline.counters.resolvedReports
        s.scanRestarts = source.scanRestarts
        s.trackedBeacons = pipeline.engine.trackedCount
        if status?.board.pageViewed == true {
            s.beacons = pipeline.engine.statusRows(limit: StatusBoard.beaconRows, at: clock)
            let now = SystemClock.monotonic()
            if now - (status?.lastSample ?? 0) >= 0.9 {
                status?.lastSample = now
                status?.history.record(s.beacons)
            }
            for row in s.beacons {
                s.rssi[row.beaconID] = status?.history.series(of: row.beaconID)
                if let room = beaconRoom(row.beaconID) { s.beaconRooms[row.beaconID] = room }
            }
        } else if status?.history.rings.isEmpty == false {
            status?.history.clear()
        }
        s.beaconsAdded = pipeline.engine.counters.beaconsAdded
        s.evictions = pipeline.engine.counters.evictions
        s.events = telemetry.events
        s.encodeFailures = telemetry.encodeFailures
        s.published = counters.published
        s.acknowledged = counters.acknowledged
        s.backlogRows = counters.backlogRows
        s.backlogBytes = counters.backlogBytes
        s.inflight = counters.inflight
        s.deadLettered = counters.deadLettered
        s.deadLetterRows = counters.deadLetterRows
        s.droppedByReason = counters.dropped
        s.latency = counters.latency
        s.brokerConnected = counters.connected
        s.brokerConnects = counters.connects
        s.connectionFailures = counters.connectionFailures
        if webhook != nil { s.webhookBacklog = await webhookBacklog() }
        s.roomsLeader = rooms.map { $0.coordinator.isLeader }
        if let coordinator = rooms?.coordinator {
            s.siteRooms = coordinator.siteRooms.sorted()
            s.fingerprints = coordinator.arbiter.fingerprints.rooms.keys.sorted().compactMap { room in
                coordinator.arbiter.fingerprints[room].map {
                    FingerprintSummary(room: room, walks: $0.walks, seconds: $0.seconds, quality: $0.quality)
                }
            }
            s.training = coordinator.trainingWalk.map {
                TrainingProgress(
                    room: $0.room, device: $0.deviceID, start: $0.start, duration: $0.duration, clock: clock)
            }
        }
        s.esphomeClients = esphome.map { $0.server.counters.snapshot.clients }
        s.regionNames = configuration.regions.map(\.name).sorted()
        s.actionsEnabled = status?.actionsEnabled ?? false
        s.teaches = pipeline.engine.runningTeaches.map {
            TeachProgress(
                region: $0.region, device: $0.device, spot: $0.spot.rawValue, seconds: $0.seconds,
                secondsLeft: $0.secondsLeft(at: clock), reports: $0.reports)
        }
        status?.board.publish(s)
    }

    /// A listed beacon's room as the arbiter decides it here, with the classifier's probabilities; nil without
    /// rooms or before its first decision.
    func beaconRoom(_ beaconID: String) -> BeaconRoom? {
        guard let arbiter = rooms?.coordinator.arbiter else { return nil }
        let probabilities = arbiter.probabilities(of: beaconID).sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { (room: $0.key, probability: $0.value) }
        let room: String? =
            switch arbiter.room(of: beaconID) {
            case let .some(.some(name)): name
            case .some(.none): RoomEvent.notHome
            case .none: nil
            }
        guard room != nil || !probabilities.isEmpty else { return nil }
        return BeaconRoom(room: room, probabilities: probabilities)
    }
}
