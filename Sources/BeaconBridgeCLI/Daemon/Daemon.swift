import BeaconConfig
import BeaconEvents
import BeaconFormats
import BeaconModel
import BeaconRuntime
import BeaconTracking
import GATTLink
import HCIScanner
import MQTTPublisher
import SQLiteStore
import YAMLConfig

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge run` / `replay`: wires the source, the pure pipeline, the SQLite database and the MQTT
/// publisher, and owns the pipeline and delivery (the publisher's `DeliveryDriver`) on one task, from start to
/// stop.
///
/// Inputs arrive through one bounded mailbox: the source's HCI event batches (handed over directly by the
/// reading thread or the replay task) and the controls (`DaemonInput`: ticks, snapshot requests, signals).
/// The pipeline, the event encoder and the state bookkeeping are touched by this loop only; each wake-up
/// ingests every waiting batch, then encodes and publishes what they produced in one go.
final class Daemon {
    let options: DaemonOptions
    var configuration: GatewayConfiguration
    let logger: Logger
    let database: GatewayDatabase?
    /// Where region state is saved (the outbox database, `--state-db`, or nowhere for a plain replay).
    let stateStore: GatewayDatabase?
    /// Replay: rows to restore at the first event's capture time (nil once done).
    var deferredRestore: [PersistedRegionState]?
    /// Delivery, owned by the loop from start to stop: inline while it runs (`admit`, `service` after every
    /// mailbox item), `deliver(until:)` while it waits for a connection or for delivery at the end, `finish`.
    let publisher: DeliveryDriver
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
    /// The group asked the loop to stop (`DaemonLoopService.stop()`), and why, for waits outside the loop (the
    /// first connection, a replay's wait for delivery at the end).
    let stopRequested = Latch<ServiceGroup.Reason>()
    /// The source started (the loop ran).
    var sourceStarted = false
    /// The thread the loop runs on (`runLoopOnItsThread`), lent to the HCI reading thread for each batch; nil
    /// before the loop starts or when the thread could not be made (the loop then runs on the pool).
    var loopExecutor: LoopExecutor?
    /// The loop's only input: HCI batches (at most `scanner.queue_capacity` events wait: a live scanner
    /// then drops its oldest, counted as `source_dropped`; a replay waits) and controls.
    let mailbox: EventMailbox<DaemonInput>
    /// When the loop last handled its tick, for the systemd watchdog.
    let heartbeat = LoopHeartbeat()
    /// The ESPHome Bluetooth proxy (`esphome_api`), nil when off.
    var esphome: DaemonESPHome?
    /// The webhook sink (`webhook`), nil when not configured.
    var webhook: DaemonWebhook?
    /// The status page and `/metrics` (`http`), nil when off (Daemon+Status).
    var status: DaemonStatus?
    /// The room arbiter (`rooms.enabled`), nil when off (Daemon+Rooms).
    var rooms: DaemonRooms?
    /// GATT commands and device information (`gatt.enabled`), nil when off (Daemon+GATT).
    var gatt: DaemonGATT?
    var gattSchedule = GATTInfoSchedule(devices: [], start: 0)
    /// What was taught (issue 43; Daemon+Teaching): the site's records, a replay's `--teach` windows.
    var teaching: DaemonTeaching
    /// The site configuration (`site:`), nil when off (Daemon+Site).
    var site: DaemonSite?

    init(
        options: DaemonOptions, configuration: GatewayConfiguration, logger: Logger, database: GatewayDatabase?,
        publisher: EventPublisher, source: any HCIEventSource, pipeline: GatewayPipeline, captureClock: CaptureClock,
        stateStore: GatewayDatabase?, deferredRestore: [PersistedRegionState], gattSlots: ConnectionSlots? = nil
    ) {
        self.stateStore = stateStore
        self.deferredRestore = deferredRestore.isEmpty ? nil : deferredRestore
        self.captureClock = captureClock
        self.options = options
        self.configuration = configuration
        self.logger = logger
        self.database = database
        self.publisher = publisher.makeDriver()
        self.source = source
        self.isReplay = options.isReplay(configuration.scanner)
        self.pipeline = pipeline
        self.encoder = EventEncoder(
            layout: TopicLayout(settings: configuration.topics, gatewayID: configuration.gateway.id))
        self.telemetry = DaemonTelemetry(startedAt: SystemClock.monotonic())
        self.mailbox = EventMailbox(capacity: max(1, configuration.scanner.queueCapacity))
        self.rooms = DaemonRooms(configuration: configuration)
        self.gatt = DaemonGATT(
            configuration: configuration, layout: encoder.layout, publisher: publisher, logger: logger,
            slots: gattSlots)
        self.gattSchedule = GATTInfoSchedule(devices: configuration.gatt.devices, start: SystemClock.monotonic())
        self.teaching = DaemonTeaching(site: configuration.topics.prefix, scheduled: options.teaches)
    }

    /// Runs until SIGTERM/SIGINT (live) or the end of the capture (replay); returns the exit code. Every
    /// long-running part is a service of one `ServiceGroup` (Daemon+Services): it receives the signals (SIGHUP:
    /// reload) and stops the parts in reverse order.
    func run() async -> Int32 {
        let services = makeServices()
        let group = ServiceGroup(
            services.all, otherSignals: [SIGHUP], onSignal: { [mailbox] _ in _ = mailbox.post(.reload) },
            onStop: { [loop = services.loop] reason in loop.stopping(because: reason) })
        _ = await group.run()
        // Nothing to sum up when the source could not start (nothing else ran).
        if services.publisher.ran {
            logger.notice(
                "stopped", metadata: telemetry.summary(pipeline: pipeline, publisher: publisher.counters))
        }
        webhook?.logStopped(to: logger)
        return services.loop.exitCode
    }

    /// `runLoop` on the loop's own thread (`LoopExecutor`, `bb-loop`) rather than the cooperative pool, so the
    /// reading thread can run it for each batch (docs/architecture.md, "The daemon"); on the pool when that
    /// thread cannot be made.
    func runLoopOnItsThread(publisherGate: Latch<Bool>) async -> Int32 {
        guard let executor = LoopExecutor.start() else {
            logger.warning("cannot start the loop's thread: the loop runs on the shared pool")
            return await runLoop(publisherGate: publisherGate)
        }
        loopExecutor = executor
        defer { executor.shutdown() }
        return await withTaskExecutorPreference(executor) { await runLoop(publisherGate: publisherGate) }
    }

    /// The loop service's run, the owner of delivery from start to stop: starts the source and delivery (the
    /// publisher's connection, once the source runs), runs the loop until a stop or the end of the source, saves
    /// the state, and for a replay that reached its end waits for delivery (`drain`), then stops delivery
    /// (`DeliveryDriver.finish`: in flight to the outbox, `offline`). The other services stop after it.
    func runLoop(publisherGate: Latch<Bool>) async -> Int32 {
        // A replay waiting for the other gateways of a rooms site starts its source once they are online; the
        // site's subscriptions go out once connected, so it delivers until then first.
        let waitsForGateways = rooms != nil && isReplay && configuration.rooms.replayWaitForGateways > 0
        if waitsForGateways {
            publishDiscovery()
            await startDelivery(publisherGate)
            await deliverUntilConnected(timeout: Daemon.firstConnectionTimeout)
            await waitForRoomGateways()
        }
        await loadTaught()
        if let failed = await startSource() {
            await publisher.finish()
            return failed
        }
        sourceStarted = true
        if !waitsForGateways {
            publishDiscovery()
            await startDelivery(publisherGate)
        }
        notifySystemd(.ready)
        if isReplay {
            await waitForFirstConnection(timeout: Daemon.firstConnectionTimeout)
            await waitForOwnOnline()
        }
        await publisher.service()
        var exitCode = await loop()
        notifySystemd(.stopping)
        exitCode = await drain(exitCode: exitCode)
        await publisher.finish()
        return exitCode
    }

    /// Starts delivery on this task (the broker connection); inputs that should not wait for the loop's next
    /// turn poke its mailbox. Opens the gate of the publisher's notices.
    private func startDelivery(_ publisherGate: Latch<Bool>) async {
        await publisher.start(wake: { [mailbox] in mailbox.poke() })
        publisherGate.open(true)
    }

    /// After the loop: saves the state, and a replay that reached its end delivers what it produced before
    /// exiting (bounded); a stop by signal leaves undelivered events in the outbox for the next start, also one
    /// that arrives during that wait (it ends the wait at once: a service manager's stop must not wait for
    /// delivery). Returns the exit code, 75 when a replay could not deliver everything.
    private func drain(exitCode: Int32) async -> Int32 {
        guard sourceStarted else { return exitCode }
        await persistStates()
        if isReplay, exitCode == ExitCode.ok || exitCode == ExitCode.dataError, !stoppedBySignal,
            !(await waitForDelivery(stallTimeout: 10)), exitCode == ExitCode.ok
        {
            return ExitCode.tempFail
        }
        return exitCode
    }

    /// Seconds a replay waits for its first broker connection before it takes in the capture (as long as its
    /// wait for delivery at the end goes without progress).
    static let firstConnectionTimeout: Double = 10

    /// A replay takes in its capture once the publisher is connected (or after `timeout` seconds without a
    /// connection, or at a stop): its source waits meanwhile (the mailbox fills and the replay thread waits for
    /// room), so the capture clock, by which sightings age in the outbox, does not run minutes ahead of a
    /// slow first connection and expire the start of the capture (issue 32). What a replay delivers then
    /// depends on the capture only.
    private func waitForFirstConnection(timeout: Double) async {
        guard !publisher.counters.connected else { return }
        logger.info("waiting for the MQTT broker before replaying", metadata: ["timeout_s": "\(Int(timeout))"])
        await deliverUntilConnected(timeout: timeout)
    }

    /// Delivers (this task owns delivery) until the publisher is connected, a stop is requested or `timeout`
    /// seconds have passed.
    private func deliverUntilConnected(timeout: Double) async {
        let start = SystemClock.monotonic()
        await publisher.deliver {
            publisher.counters.connected || stopRequested.value != nil || SystemClock.monotonic() - start >= timeout
        }
    }

    /// Starts the source; the exit code when it cannot start.
    private func startSource() async -> Int32? {
        do {
            // Live, the reading thread runs the loop's work on each batch itself (no wake-up of the loop's
            // thread); a replay's thread waits for room in the mailbox instead, so it only hands over.
            if let loopExecutor, !isReplay {
                try await source.start(into: HostedEventSink(mailbox: mailbox, executor: loopExecutor))
            } else {
                try await source.start(into: mailbox)
            }
        } catch {
            logger.critical("cannot start the source", metadata: ["error": "\(error)"])
            return ExitCode.forSourceFailure(error)
        }
        logger.notice(
            isReplay ? "replaying capture" : "scanning",
            metadata: [
                "gateway": "\(configuration.gateway.id)",
                "source": "\(options.replayPath ?? configuration.scanner.source.configValue)",
                "broker": "\(configuration.mqtt.host):\(configuration.mqtt.port)",
                "regions": "\(configuration.regions.count)",
            ])
        return nil
    }

    /// The single loop that owns the pipeline and delivery: events are delivered inline, after every item the
    /// publisher's waiting inputs (acknowledgements, connection changes) are handled here too, and the
    /// once-a-second tick is its tick.
    private func loop() async -> Int32 {
        while true {
            var tick = false
            let item = await mailbox.next()
            // Consumed, so the batches are this loop's alone when their buffers go back to the mailbox
            // (a second reference would make emptying them allocate new buffers instead).
            switch consume item {
            case .events(var batches):
                for batch in batches { await handle(batch) }
                mailbox.recycle(&batches)
            case .finished:
                // A stop posted while this loop was busy is dropped with the mailbox's waiting controls when the
                // source service closes the mailbox right after it (the group stops the loop, then the source):
                // the end of the source after a requested stop is that stop, not a live source that ended (69).
                if let reason = stopRequested.value, let exitCode = await handle(.stop(reason)) { return exitCode }
                return await sourceEnded()
            case let .control(control):
                if case .tick = control { tick = true }
                if let exitCode = await handle(control) { return exitCode }
            case .poked:
                break
            }
            await flushPending()
            await advanceRooms(force: false)
            await publisher.service(tick: tick)
        }
    }

    /// A control input; the exit code when it ends the loop.
    private func handle(_ control: DaemonInput) async -> Int32? {
        switch control {
        case .tick:
            heartbeat.beat()
            // Live, the tick is what advances time. A replay's time is its capture: the pipeline and the rooms
            // advance from the events (every second of capture time), never at a wall-clock tick, whose capture
            // time would depend on `--speed` and on how the reader batched the events.
            if !isReplay {
                clock = max(clock, SystemClock.realtime())
                await publish(pipeline.advance(to: clock))
                lastAdvance = clock
            }
            await persistStates()
            await handleRoomMessages()
            await handleTeachMessages()
            if !isReplay { await advanceTeaches() }
            await advanceRooms(force: !isReplay)
            await publishTelemetryIfDue()
            await publishStatus()
            readDueInformation()
            await handleSite()
        case .rooms:
            await handleRoomMessages()
        case .teaching:
            await handleTeachMessages()
        case let .roomCommand(verb, payload):
            await perform(roomCommand(verb: verb, payload: payload))
            await publishStatus()
        case let .regionCommand(verb, payload):
            await teachCommand(verb: verb, payload: payload)
            await publishStatus()
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
        case .stop(.signal(let signal)):
            stoppedBySignal = true
            logStopping(signal)
            return ExitCode.ok
        case .stop(.finished(let service)):
            // Another part ended by itself, which none should (a bug).
            logger.error("stopping: a part of the daemon ended", metadata: ["service": "\(service)"])
            return ExitCode.software
        }
        return nil
    }

    /// Events produced by the last HCI events, published in batches between inputs.
    var pending: [EngineEvent] = []

    /// One batch of HCI events. Live, the pipeline takes it whole; a replay goes event by event, since its clock
    /// (capture time) advances the pipeline every second between events and restores state at the first one.
    private func handle(_ batch: [CapturedHCIEvent]) async {
        esphome?.submit(batch)
        guard !isReplay else {
            for event in batch {
                handle(event)
                // A teach ends (and applies what it learned) at its capture time, before what follows is scored.
                if clock - teaching.lastAdvance >= 1 {
                    teaching.lastAdvance = clock
                    await advanceTeaches()
                }
                // The rooms advance at each second of capture time, after that second's own sightings, as the
                // engine does: where the reader's batches happen to end (which depends on `--speed`) must not
                // move a room decision.
                if let rooms, clock - rooms.lastAdvance >= 1 {
                    await flushPending()
                    await advanceRooms(force: false)
                }
            }
            return
        }
        guard let last = batch.last else { return }
        pipeline.ingest(batch, into: &pending)
        clock = max(clock, last.timestamp)
        captureClock.advance(to: clock)
        logDecodeErrorIfDue()
    }

    private func handle(_ event: CapturedHCIEvent) {
        if let rows = deferredRestore {
            deferredRestore = nil
            let count = pipeline.restore(rows, now: event.timestamp)
            logger.info("region state restored", metadata: ["rows": "\(count)"])
        }
        clock = max(clock, event.timestamp)
        captureClock.advance(to: clock)
        if teaching.captureStart == nil { teaching.captureStart = event.timestamp }
        if !teaching.scheduled.isEmpty { startScheduledTeaches() }
        pipeline.ingest(event, into: &pending)
        if isReplay, clock - lastAdvance >= 1 {
            pending.append(contentsOf: pipeline.advance(to: clock))
            lastAdvance = clock
        }
        logDecodeErrorIfDue()
    }

    /// The last malformed event, at most once a minute of the pipeline's clock.
    private func logDecodeErrorIfDue() {
        if let problem = pipeline.lastDecodeError, clock - lastDecodeErrorLog >= 60 {
            lastDecodeErrorLog = clock
            logger.warning(
                "malformed HCI event skipped",
                metadata: [
                    "offset": "\(problem.offset)", "reason": "\(problem.reason)",
                    "malformed_total": "\(pipeline.counters.malformedEvents)",
                ])
        }
    }

    /// Publishes the pending events and keeps their buffer for the next ones. (Copying `pending` and emptying it
    /// with its capacity kept allocated a buffer of the whole capacity every turn, since the copy held the old
    /// one: after a burst of a thousand events, a 118 KB `malloc` per loop turn.)
    private func flushPending() async {
        guard !pending.isEmpty else { return }
        var batch: [EngineEvent] = []
        swap(&batch, &pending)
        await publish(batch)
        batch.removeAll(keepingCapacity: true)
        if pending.isEmpty { pending = batch }
    }

    /// End of the source: for a replay, let the exit periods and away timeouts of the story run out.
    private func sourceEnded() async -> Int32 {
        await flushPending()
        var code = ExitCode.ok
        if let failure = source.failure {
            logger.error(
                isReplay
                    ? "capture damaged: the events before the damage were replayed, the rest of the file was not"
                    : "source ended", metadata: ["error": "\(failure)"])
            if !isReplay { return ExitCode.unavailable }
            code = ExitCode.forSourceFailure(failure)
        }
        guard isReplay else { return ExitCode.unavailable }
        // Long enough for every beacon to end `away`: a habitually quiet one is held `stale` for at most
        // `stale_max_s`.
        let tail =
            max(
                configuration.tracking.awayTimeout,
                configuration.tracking.awayTimeoutOverrides.values.max() ?? 0,
                configuration.tracking.staleMax,
                configuration.regions.map(\.exitPeriod).max() ?? 0) + 1
        clock += tail
        // Only the pipeline's clock runs on: the publisher still judges the age of undelivered sightings
        // against the newest capture time, so finishing the story does not expire them.
        await publish(pipeline.advance(to: clock))
        await advanceTeaches()
        await publishTelemetryIfDue(final: true)
        await publishStatus()
        logger.notice(
            "capture replayed",
            metadata: [
                "hci_events": "\(pipeline.counters.hciEvents)", "reports": "\(pipeline.counters.reports)",
                "beacons": "\(pipeline.engine.counters.beaconsAdded)",
                "beacon_observations": "\(pipeline.counters.beacons)",
                "malformed": "\(pipeline.counters.malformedEvents)",
            ])
        return code
    }

    /// The log line of a stop by signal.
    func logStopping(_ signal: Int32) {
        logger.notice("stopping", metadata: ["signal": "\(signal == SIGTERM ? "SIGTERM" : "SIGINT")"])
    }

    /// Delivers (on this task) until the outbox is drained (including a backlog from earlier runs) and nothing
    /// is in flight: as long as delivery makes progress (acknowledgements, a shrinking backlog), giving up after
    /// `stallTimeout` seconds without any (broker unreachable) or after an hour in all, and at once on a stop
    /// (a signal: the group asks the loop service to stop, `stopRequested`, within 250 ms). False: events remain in the outbox (the replay then exits 75, EX_TEMPFAIL).
    private func waitForDelivery(stallTimeout: Double) async -> Bool {
        let start = SystemClock.monotonic()
        var lastProgress = start
        var lastLook = -Double.infinity
        var mark = (acknowledged: -1, backlog: -1, deadLetters: -1, webhookBacklog: -1)
        var delivered = false
        // Delivery goes on on this task; the figures are looked at after every turn, at most every 50 ms (and at
        // least 4 times a second: the driver's tick).
        await publisher.deliver {
            let now = SystemClock.monotonic()
            guard now - lastLook >= 0.05 else { return false }
            lastLook = now
            // Alive while delivery goes on (the systemd watchdog still runs).
            heartbeat.beat()
            let counters = publisher.counters
            let webhookBacklog = await webhookBacklog()
            if counters.live, counters.inflight == 0, counters.backlogRows == 0,
                counters.settled >= telemetry.submitted,
                webhookBacklog == 0
            {
                delivered = true
                return true
            }
            if let reason = stopRequested.value {
                if case let .signal(signal) = reason {
                    stoppedBySignal = true
                    logStopping(signal)
                }
                return true
            }
            let figures = (counters.acknowledged, counters.backlogRows, counters.deadLettered, webhookBacklog)
            if figures != mark {
                mark = figures
                lastProgress = now
            } else if now - lastProgress >= stallTimeout {
                return true
            }
            return now - start >= 3600
        }
        if delivered { return true }
        let webhookLeft = await webhookBacklog()
        logger.warning(
            "events still undelivered at exit stay in the outbox",
            metadata: [
                "backlog": "\(publisher.counters.backlogRows)", "connected": "\(publisher.counters.connected)",
                "webhook_backlog": "\(webhookLeft)",
            ])
        return false
    }

    /// Rows the webhook has not had acknowledged yet (0 without a webhook): a replay's final wait covers it too.
    func webhookBacklog() async -> Int {
        guard let webhook, let database else { return 0 }
        return (try? await database.backlog(of: webhook.driver.sink.name)) ?? 0
    }

    /// Saves what changed (region state, devices seen, encryption counters) on the database's queue; the loop is
    /// resumed when done, no thread of the pool waits.
    private func persistStates() async {
        pipeline.expireResolvedAddresses(at: clock)
        let seen = pipeline.takeSeenDeviceKeys()
        if !seen.isEmpty, let database {
            do { try await database.storeSeenDeviceKeys(seen) } catch {
                logger.error("cannot save the devices seen", metadata: ["error": "\(error)"])
            }
        }
        let counters = pipeline.takeEncryptionCounters()
        if !counters.isEmpty, let database {
            do { try await database.storeEncryptionCounters(counters) } catch {
                logger.error("cannot save the BTHome encryption counters", metadata: ["error": "\(error)"])
            }
        }
        let changes = pipeline.takeStateChanges()
        guard !changes.isEmpty, let stateStore else { return }
        do { try await stateStore.storeRegionStates(changes) } catch {
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
