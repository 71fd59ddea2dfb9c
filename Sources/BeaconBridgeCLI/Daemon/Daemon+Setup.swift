import BeaconConfig
import BeaconDelivery
import BeaconEvents
import BeaconFormats
import BeaconRuntime
import BeaconTracking
import GATTLink
import HCIScanner
import MQTTPublisher
import SQLiteStore
import YAMLConfig

extension Daemon {
    /// Loads the configuration and builds every part; on failure prints why and returns the exit code.
    static func start(_ options: DaemonOptions) async -> Int32 {
        let environment = ProcessEnvironment.current()
        var configuration: GatewayConfiguration
        switch ConfigurationLoader.load(path: options.config.path) {
        case let .success(loaded): configuration = loaded
        case let .failure(errors):
            if errors.kind == .fileMissing {
                Output.stderr(
                    "beaconbridge: configuration file \(options.config.path) not found (\(options.config.howToChange))")
                return ExitCode.noInput
            }
            if errors.kind == .fileUnreadable {
                for line in errors.lines { Output.stderr("beaconbridge: \(line)") }
                return ExitCode.noInput
            }
            for line in errors.lines { Output.stderr(line) }
            Output.stderr("beaconbridge: \(errors.issues.count) problem(s) in \(options.config.path); nothing started")
            return ExitCode.config
        }
        // The same start-up checks as `check-config` (outbox path, MQTT client settings, layouts).
        let findings = StartupChecks.run(configuration)
        if !findings.problems.isEmpty {
            for issue in StartupChecks.locate(findings.problems, in: options.config.path) {
                Output.stderr(issue.located)
            }
            Output.stderr(
                "beaconbridge: \(findings.problems.count) problem(s) in \(options.config.path); nothing started")
            return ExitCode.config
        }
        var level = Logger.Level(configuration.logging.level)
        if let text = options.logLevel {
            guard let parsed = LoggingSettings.Level(rawValue: text) else {
                Output.stderr(
                    "beaconbridge: --log-level must be one of \(LoggingSettings.Level.allCases.map(\.rawValue).joined(separator: ", "))"
                )
                return ExitCode.usage
            }
            level = Logger.Level(parsed)
        }
        // Under systemd with stderr on the journal, no `ts=` (journald stamps each line).
        let logger = Logger(
            label: "beaconbridge",
            handler: LogfmtHandler(
                level: level, includesTimestamp: !LogfmtHandler.writesToJournal(environment: environment)))
        for warning in StartupChecks.locate(findings.warnings, in: options.config.path) {
            logger.warning("configuration: \(StartupChecks.warningLine(warning))")
        }
        // The last committed site configuration joins the local file (Daemon+Site).
        let site: DaemonSite?
        switch DaemonSite.prepare(&configuration, path: options.config.path, logger: logger) {
        case .success(let prepared): site = prepared
        case .failure(let status): return status.code
        }
        let regionNames = Set(configuration.regions.map(\.name))
        if let unknown = options.teaches.first(where: { $0.region.map { !regionNames.contains($0) } ?? false }) {
            Output.stderr(
                "beaconbridge replay: --teach: `\(unknown.region ?? "")` is not a configured region (\(regionNames.sorted().joined(separator: ", ")))"
            )
            return ExitCode.usage
        }
        let isReplay = options.isReplay(configuration.scanner)
        let now = SystemClock.realtime()

        // The database: outbox, region state, sequence counter. Usable or nothing starts: a damaged file is
        // moved aside (kept) and a fresh one created; any other failure (disk full, permissions) exits 74.
        guard let opened = await openDatabase(configuration.outbox, role: "outbox", now: now, logger: logger) else {
            return ExitCode.ioError
        }
        let database: GatewayDatabase? = opened
        // Region state lives in the outbox database, or in `--state-db`; a replay persists it only with
        // `--state-db` (so replaying a capture never disturbs a live gateway's state) and restores it at the
        // first replayed event's capture time, the clock its rows are written in.
        var stateStore: GatewayDatabase? = isReplay ? nil : database
        if let path = options.stateDatabasePath {
            if path == configuration.outbox.path, let database {
                stateStore = database
            } else {
                var settings = configuration.outbox
                settings.path = path
                if let problem = DatabaseFile.problem(with: path) {
                    Output.stderr("beaconbridge: --state-db: \(problem)")
                    return ExitCode.cantCreate
                }
                guard let opened = await openDatabase(settings, role: "state", now: now, logger: logger) else {
                    return ExitCode.ioError
                }
                stateStore = opened
            }
        }
        var restored: [PersistedRegionState] = []
        if let stateStore {
            do { restored = try await stateStore.storedRegionStates() } catch {
                logger.error(
                    "cannot read saved region state; starting with every region unknown",
                    metadata: ["error": "\(error)"])
            }
        }
        let deferredRestore = isReplay ? restored : []
        if isReplay { restored = [] }

        let decoder: BeaconDecoder
        do { decoder = try BeaconDecoder(settings: configuration.formats) } catch {
            Output.stderr("beaconbridge: \(error)")
            return ExitCode.config
        }
        let engine = RegionEngine(
            settings: configuration.tracking, regions: configuration.regions,
            distance: DistanceEstimator(settings: configuration.distance),
            restoring: restored, now: now)
        if !restored.isEmpty { logger.info("region state restored", metadata: ["rows": "\(restored.count)"]) }
        var seenKeys: [SeenDeviceKey] = []
        if let database, !configuration.devices.known.isEmpty {
            do { seenKeys = try await database.storedSeenDeviceKeys() } catch {
                logger.error(
                    "cannot read the devices seen before; key byte orders are learned again",
                    metadata: ["error": "\(error)"])
            }
        }
        var pipeline = GatewayPipeline(
            decoder: decoder, engine: engine, includeDevices: configuration.formats.includeDevices,
            devices: configuration.devices,
            learnedOrders: SeenDeviceKey.learnedOrders(seenKeys, for: configuration.devices))
        if let database, !configuration.formats.bthomeKeys.isEmpty {
            // BTHome replay protection across restarts: a counter not newer than the saved one is a duplicate.
            do { pipeline.restoreEncryptionCounters(try await database.storedEncryptionCounters()) } catch {
                logger.error(
                    "cannot read the saved BTHome encryption counters; the next frame of each device is accepted",
                    metadata: ["error": "\(error)"])
            }
        }
        if !configuration.devices.known.isEmpty {
            logger.info(
                "private devices",
                metadata: [
                    "devices": "\(configuration.devices.known.count)",
                    "with_key": "\(pipeline.privateDevices.count)",
                ])
        }

        let password: String?
        do { password = try MQTTCredentials.password(for: configuration.mqtt, environment: { environment[$0] }) } catch
        {
            Output.stderr("beaconbridge: \(error)")
            return ExitCode.config
        }
        let layout = TopicLayout(settings: configuration.topics, gatewayID: configuration.gateway.id)
        let captureClock = CaptureClock()
        let publisher: EventPublisher
        do {
            var publisherConfiguration = EventPublisher.Configuration(
                mqtt: configuration.mqtt, password: password, layout: layout,
                outbox: configuration.outbox)
            if isReplay { publisherConfiguration.ageClock = { captureClock.now } }
            publisherConfiguration.acknowledgesLiveEvents = configuration.webhook != nil
            publisher = try EventPublisher(configuration: publisherConfiguration, outbox: database)
        } catch {
            Output.stderr("beaconbridge: cannot set up the MQTT client: \(error)")
            return ExitCode.software
        }

        // One pool of GATT connection slots for the MQTT commands and the ESPHome proxy's active connections.
        let gattSlots = configuration.gatt.enabled ? ConnectionSlots(limit: configuration.gatt.slots) : nil
        let esphome: DaemonESPHome?
        switch await DaemonESPHome.start(
            configuration: configuration, environment: environment, logger: logger, isReplay: isReplay,
            gattSlots: gattSlots)
        {
        case let .success(value): esphome = value
        case let .failure(error):
            Output.stderr("beaconbridge: \(error)")
            return error.exitCode
        }

        let status: DaemonStatus?
        switch DaemonStatus.start(configuration: configuration, environment: environment, logger: logger) {
        case let .success(value): status = value
        case let .failure(error):
            Output.stderr("beaconbridge: \(error)")
            await esphome?.stop(logger: logger)
            return error.exitCode
        }

        let webhook: DaemonWebhook?
        if let database {
            switch await DaemonWebhook.start(
                configuration: configuration, database: database, environment: environment, logger: logger)
            {
            case let .success(value): webhook = value
            case let .failure(error):
                Output.stderr("beaconbridge: \(error)")
                return ExitCode.config
            }
        } else {
            webhook = nil
        }

        let source: any HCIEventSource
        // The window (live and paced replay) grows at low rates unless the ESPHome proxy passes reports on
        // (docs/scanner.md).
        let batchWindow = configuration.scanner.effectiveBatchWindow(esphomeProxy: configuration.esphomeAPI.enabled)
        let maxGap = options.replayMaxGap ?? configuration.scanner.replayMaxGap
        let replayPath: String? =
            switch configuration.scanner.source {
            case let .replay(path): options.replayPath ?? path
            case .hci: options.replayPath
            }
        if let path = replayPath {
            source = ReplaySource(
                path: path, speed: options.replaySpeed ?? configuration.scanner.replaySpeed, maxIdleGap: maxGap,
                batchWindow: batchWindow)
        } else if let feed = options.hciFeedDescriptor {
            source = HCIScanner(settings: configuration.scanner, feedDescriptor: feed, batchWindow: batchWindow)
        } else {
            var recorder: BTSnoopFileRecorder?
            if let path = options.recordPath ?? configuration.scanner.record {
                do { recorder = try BTSnoopFileRecorder(path: path) } catch {
                    Output.stderr("beaconbridge: cannot record to \(path): \(error)")
                    return ExitCode.cantCreate
                }
            }
            let scannerLogger = logger.child(label: "scanner")
            source = HCIScanner(
                settings: configuration.scanner, recorder: recorder, batchWindow: batchWindow,
                advertising: Daemon.identityAdvertising(configuration)
            ) { notice in
                switch notice {
                case .recoveryFailed, .advertisingFailed:
                    scannerLogger.error("\(notice)")
                default:
                    scannerLogger.notice("\(notice)")
                }
            }
        }
        let daemon = Daemon(
            options: options, configuration: configuration, logger: logger, database: database,
            publisher: publisher, source: source, pipeline: pipeline, captureClock: captureClock,
            stateStore: stateStore, deferredRestore: deferredRestore, gattSlots: gattSlots)
        daemon.esphome = esphome
        daemon.webhook = webhook
        daemon.status = status
        // Actions: rooms commands (the route refuses them with rooms off) and regions commands.
        status?.board.connectActions { [mailbox = daemon.mailbox] in mailbox.post($0) }
        daemon.site = site
        return await daemon.run()
    }

    /// Opens a database (creating its directory when only that is missing), moving a damaged file aside (logged loudly: its buffered events are not sent) and
    /// creating a fresh one; nil after printing why when that is impossible (disk full, permissions, a newer
    /// schema): the caller exits 74 rather than run without durable buffering. SQLite's open and migration
    /// block, so they run on a thread of their own (inline only if no thread can be created).
    static func openDatabase(_ settings: OutboxSettings, role: String, now: Double, logger: Logger) async
        -> GatewayDatabase?
    {
        // The state directory (`/var/lib/beaconbridge` outside the package's unit) when only it is missing.
        if let problem = DatabaseFile.createDirectory(for: settings.path) {
            Output.stderr(
                "beaconbridge: cannot open the \(role) database \(settings.path): \(problem); nothing started")
            return nil
        }
        let open: @Sendable () -> Result<(GatewayDatabase, GatewayDatabase.MovedAside?), SQLiteError> = {
            do throws(SQLiteError) {
                let opened = try GatewayDatabase.openMovingAsideDamaged(settings: settings, unixTime: now)
                return .success((opened.database, opened.movedAside))
            } catch {
                return .failure(error)
            }
        }
        let outcome: Result<(GatewayDatabase, GatewayDatabase.MovedAside?), SQLiteError>
        do { outcome = try await DedicatedThread.run(name: "bb-db-open", open) } catch { outcome = open() }
        switch outcome {
        case let .success((database, movedAside)):
            if let movedAside {
                logger.critical(
                    "the \(role) database was damaged: moved aside and a new one created; events buffered "
                        + "in the old file are not sent (it is kept for inspection)",
                    metadata: [
                        "path": "\(settings.path)", "moved_to": "\(movedAside.path)", "error": "\(movedAside.error)",
                    ])
            }
            return database
        case let .failure(error):
            let why = error.isDiskFull ? "the disk is full (free space and start again)" : "\(error)"
            Output.stderr("beaconbridge: cannot open the \(role) database \(settings.path): \(why); nothing started")
            return nil
        }
    }
}
