import BeaconCore
import HCIScanner
import MQTTPublisher
import SQLiteStore
import YAMLConfig
#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge run` / `replay`: wires the source, the pure pipeline, the SQLite database and the MQTT
/// publisher, and owns the pipeline on one task.
///
/// Inputs (HCI events, ticks, snapshot requests, signals) arrive through one stream (`DaemonInput`), so the
/// pipeline, the event encoder and the state bookkeeping are touched by this loop only.
final class Daemon {
    let options: DaemonOptions
    var configuration: GatewayConfiguration
    let logger: Logger
    let database: GatewayDatabase?
    /// Where region state is saved (the outbox database, `--state-db`, or nowhere for a plain replay).
    let stateStore: GatewayDatabase?
    /// Replay: rows to restore at the first event's capture time (nil once done).
    var deferredRestore: [PersistedRegionState]?
    let publisher: EventPublisher
    let source: any HCIEventSource
    let isReplay: Bool
    let captureClock: CaptureClock
    var pipeline: GatewayPipeline
    var encoder: EventEncoder
    /// Sensor fields the named beacons have sent (Home Assistant discovery for them, Daemon+Publishing).
    var sensorFields = SensorFieldTracker()
    var telemetry: DaemonTelemetry
    /// The capture-time clock: the newest event's time (replay), or the wall clock (live).
    var clock: Timestamp = 0
    var lastAdvance: Timestamp = 0
    var lastDecodeErrorLog: Timestamp = -.infinity
    var stoppedBySignal = false
    let inputs: AsyncStream<DaemonInput>
    let input: AsyncStream<DaemonInput>.Continuation

    init(options: DaemonOptions, configuration: GatewayConfiguration, logger: Logger, database: GatewayDatabase?,
         publisher: EventPublisher, source: any HCIEventSource, pipeline: GatewayPipeline, captureClock: CaptureClock,
         stateStore: GatewayDatabase?, deferredRestore: [PersistedRegionState]) {
        self.stateStore = stateStore
        self.deferredRestore = deferredRestore.isEmpty ? nil : deferredRestore
        self.captureClock = captureClock
        self.options = options
        self.configuration = configuration
        self.logger = logger
        self.database = database
        self.publisher = publisher
        self.source = source
        self.isReplay = options.isReplay(configuration.scanner)
        self.pipeline = pipeline
        self.encoder = EventEncoder(layout: TopicLayout(settings: configuration.topics, gatewayID: configuration.gateway.id))
        self.telemetry = DaemonTelemetry(startedAt: HCIClock.monotonic())
        (inputs, input) = AsyncStream.makeStream(of: DaemonInput.self, bufferingPolicy: .bufferingNewest(16_384))
    }

    /// Runs until SIGTERM/SIGINT (live) or the end of the capture (replay); returns the exit code.
    func run() async -> Int32 {
        let signals = SignalStream(signals: [SIGTERM, SIGINT, SIGHUP]) { [input] number in
            input.yield(number == SIGHUP ? .reload : .stop(number))
        }
        defer { signals.cancel() }
        let stream: AsyncStream<CapturedHCIEvent>
        do {
            stream = try await source.events()
        } catch {
            logger.critical("cannot start the source", metadata: ["error": "\(error)"])
            return ExitCode.unavailable
        }
        logger.notice(isReplay ? "replaying capture" : "scanning", metadata: [
            "gateway": "\(configuration.gateway.id)", "source": "\(options.replayPath ?? configuration.scanner.source.configValue)",
            "broker": "\(configuration.mqtt.host):\(configuration.mqtt.port)", "regions": "\(configuration.regions.count)",
        ])
        publishDiscovery()
        var exitCode = ExitCode.ok
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [publisher] in await publisher.run() }
            group.addTask { [input] in
                // Backpressure instead of a second place that drops: while the loop has `pendingLimit` events
                // waiting, stop reading the source (a replay waits; the live scanner's own bounded queue drops
                // its oldest, counted there).
                for await event in stream {
                    while DaemonTelemetry.pendingEvents.load(ordering: .relaxed) >= Daemon.pendingLimit {
                        try? await Task.sleep(for: .milliseconds(1))
                    }
                    DaemonTelemetry.pendingEvents.add(1, ordering: .relaxed)
                    if case .dropped = input.yield(.hci(event)) { DaemonTelemetry.pipelineDrops.add(1, ordering: .relaxed) }
                }
                input.yield(.sourceEnded)
            }
            group.addTask { [input] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    input.yield(.tick)
                }
            }
            group.addTask { [publisher, input, logger] in
                for await notice in publisher.notices {
                    if case let .snapshotRequested(reason) = notice { input.yield(.snapshot(reason.rawValue)) }
                    Daemon.log(notice, to: logger)
                }
            }
            if let watchdog = SystemdWatchdog(environment: ProcessEnvironment.current()) {
                // Healthy while the loop keeps handling its once-a-second tick.
                group.addTask { [logger] in
                    await watchdog.run(isHealthy: { DaemonTelemetry.loopIsAlive() },
                                       onError: { logger.warning("systemd watchdog: \($0)") })
                }
            }
            notifySystemd(.ready)
            exitCode = await loop()
            notifySystemd(.stopping)
            source.stop()
            persistStates()
            // A replay that reached its end delivers what it produced before exiting (bounded); a stop by
            // signal leaves undelivered events in the outbox for the next start.
            if isReplay, exitCode == ExitCode.ok, !stoppedBySignal { await waitForDelivery(timeout: 10) }
            await publisher.stop()
            group.cancelAll()
        }
        logger.notice("stopped", metadata: telemetry.summary(pipeline: pipeline, publisher: publisher.counters))
        return exitCode
    }

    /// The single loop that owns the pipeline.
    private func loop() async -> Int32 {
        for await item in inputs {
            switch item {
            case let .hci(event):
                DaemonTelemetry.pendingEvents.subtract(1, ordering: .relaxed)
                handle(event)
            case .tick:
                DaemonTelemetry.loopHeartbeat()
                if !isReplay { clock = max(clock, HCIClock.realtime()) }
                await publish(pipeline.advance(to: clock))
                lastAdvance = clock
                persistStates()
                await publishTelemetryIfDue()
            case let .snapshot(reason):
                logger.info("publishing region state and presence snapshot", metadata: ["reason": "\(reason)"])
                await publish(pipeline.stateSnapshot(at: clock), snapshot: true)
                // Presence again (retained) after a reconnect and on Home Assistant's birth, for a broker that lost
                // its retained messages. Not on the first connect: every presence event of this run is still
                // on its way then (outbox), so a repeat would only duplicate it.
                if reason != PublisherNotice.SnapshotReason.connected.rawValue || publisher.counters.connects > 1 {
                    await publish(pipeline.presenceSnapshot(at: clock), snapshot: true)
                }
            case .reload:
                await reload()
            case let .stop(signal):
                stoppedBySignal = true
                logger.notice("stopping", metadata: ["signal": "\(signal == SIGTERM ? "SIGTERM" : "SIGINT")"])
                return ExitCode.ok
            case .sourceEnded:
                return await sourceEnded()
            }
            await flushPending()
        }
        return ExitCode.ok
    }

    /// HCI events waiting for the loop before the source is paused; well under the input stream's capacity,
    /// so ticks, snapshot requests and signals are never the ones dropped.
    static let pendingLimit = 4096

    /// Events produced by the last HCI events, published in batches between inputs.
    var pending: [EngineEvent] = []

    private func handle(_ event: CapturedHCIEvent) {
        if let rows = deferredRestore {
            deferredRestore = nil
            let count = pipeline.restore(rows, now: event.timestamp)
            logger.info("region state restored", metadata: ["rows": "\(count)"])
        }
        clock = max(clock, event.timestamp)
        captureClock.advance(to: clock)
        pipeline.ingest(event, into: &pending)
        if isReplay, clock - lastAdvance >= 1 {
            pending.append(contentsOf: pipeline.advance(to: clock))
            lastAdvance = clock
        }
        if let problem = pipeline.lastDecodeError, clock - lastDecodeErrorLog >= 60 {
            lastDecodeErrorLog = clock
            logger.warning("malformed HCI event skipped", metadata: [
                "offset": "\(problem.offset)", "reason": "\(problem.reason)",
                "malformed_total": "\(pipeline.counters.malformedEvents)",
            ])
        }
    }

    private func flushPending() async {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        await publish(batch)
    }

    /// End of the source: for a replay, let the exit periods and away timeouts of the story run out.
    private func sourceEnded() async -> Int32 {
        await flushPending()
        if let failure = source.failure {
            logger.error("source ended", metadata: ["error": "\(failure)"])
            if !isReplay { return ExitCode.unavailable }
        }
        guard isReplay else { return ExitCode.unavailable }
        let tail = max(configuration.tracking.awayTimeout,
                       configuration.tracking.awayTimeoutOverrides.values.max() ?? 0,
                       configuration.regions.map(\.exitPeriod).max() ?? 0) + 1
        clock += tail
        // Only the pipeline's clock runs on: the publisher still judges the age of undelivered sightings
        // against the newest capture time, so finishing the story does not expire them.
        await publish(pipeline.advance(to: clock))
        logger.notice("capture replayed", metadata: [
            "hci_events": "\(pipeline.counters.hciEvents)", "reports": "\(pipeline.counters.reports)",
            "beacons": "\(pipeline.counters.beacons)", "malformed": "\(pipeline.counters.malformedEvents)",
        ])
        return ExitCode.ok
    }

    /// Waits until the publisher has nothing in flight and nothing in the outbox, up to `timeout` seconds.
    private func waitForDelivery(timeout: Double) async {
        let deadline = HCIClock.monotonic() + timeout
        while HCIClock.monotonic() < deadline {
            let counters = publisher.counters
            if counters.connected, counters.inflight == 0, counters.backlogRows == 0,
               counters.settled >= telemetry.submitted { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
        logger.warning("events still undelivered at exit stay in the outbox", metadata: ["backlog": "\(publisher.counters.backlogRows)"])
    }

    private func persistStates() {
        pipeline.expireResolvedAddresses(at: clock)
        let seen = pipeline.takeSeenDeviceKeys()
        if !seen.isEmpty, let database {
            do { try database.saveSeenDeviceKeys(seen) } catch {
                logger.error("cannot save the devices seen", metadata: ["error": "\(error)"])
            }
        }
        let counters = pipeline.takeEncryptionCounters()
        if !counters.isEmpty, let database {
            do { try database.saveEncryptionCounters(counters) } catch {
                logger.error("cannot save the BTHome encryption counters", metadata: ["error": "\(error)"])
            }
        }
        let changes = pipeline.takeStateChanges()
        guard !changes.isEmpty, let stateStore else { return }
        do { try stateStore.saveRegionStates(changes) } catch {
            logger.error("cannot save region state", metadata: ["error": "\(error)"])
        }
    }

    enum SystemdMessage { case ready, reloading, stopping }

    /// Tells systemd (Type=notify) where the daemon is; nothing when not started by systemd.
    func notifySystemd(_ message: SystemdMessage) {
        guard let notifier = SystemdNotifier(environment: ProcessEnvironment.current()) else { return }
        do throws(SystemdNotifyError) {
            switch message {
            case .ready: try notifier.ready(status: isReplay ? "replaying" : "scanning")
            case .reloading: try notifier.reloading()
            case .stopping: try notifier.stopping()
            }
        } catch {
            logger.warning("systemd notify: \(error)")
        }
    }
}
