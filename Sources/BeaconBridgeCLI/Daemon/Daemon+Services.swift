import BeaconModel
import BeaconRuntime
import MQTTPublisher
import Synchronization

/// The daemon's long-running parts as the services of one `ServiceGroup`, in start order (the group stops them
/// in reverse, each ending before the next is stopped):
///
/// 0. `webhook` (when on): the webhook sink's driver, delivering from its own outbox cursor.
/// 1. `publisher`: the logging of the MQTT publisher's notices (snapshot requests go to the loop), from the
///    start of delivery (once the source runs, or at once when a replay waits for a rooms site's gateways) to its
///    end. Delivery itself is the loop's, from start to stop.
/// 2. `esphome` (when on): the Bluetooth proxy's server and its mDNS announcement.
/// 3. `rooms` (when on): the room arbiter's subscriptions, forwarded to the loop; `gatt` (when on): the GATT
///    command subscription, handed to the command workers (Daemon+GATT); `teaching`: the regions commands and
///    the retained taught records, forwarded to the loop (Daemon+Teaching).
/// 4. `watchdog` (under systemd with `WatchdogSec=`): pings while the loop keeps beating.
/// 5. `tick`: the loop's once-a-second tick.
/// 6. `source`: the HCI scanner or replay (started by the loop, stopped here; the mailbox is closed with it).
/// 7. `loop`: starts the source and delivery, then owns the pipeline and delivery until a stop or the end of the
///    source, a replay's wait for delivery at the end, and the stop of delivery (in flight to the outbox,
///    `offline`), before any other service stops.
struct DaemonServices {
    let publisher: DaemonPublisherService
    let loop: DaemonLoopService
    let all: [any Service]
}

extension Daemon {
    func makeServices() -> DaemonServices {
        let publisherService = DaemonPublisherService(
            publisher: publisher.publisher, mailbox: mailbox, logger: logger)
        let loop = DaemonLoopService(daemon: self, publisherGate: publisherService.gate)
        var all: [any Service] = []
        if let webhook {
            // First, so it is stopped last (a replay's wait for delivery, in the loop, covers it too).
            all.append(TaskService("webhook") { [driver = webhook.driver] in await driver.run() })
        }
        all.append(publisherService)
        if let status {
            all.append(StopOnlyService("http") { await status.server.stop() })
        }
        if let esphome {
            all.append(StopOnlyService("esphome") { [logger] in await esphome.stop(logger: logger) })
        }
        if let rooms = roomSubscriptionService() { all.append(rooms) }
        if let gatt = gattCommandService() { all.append(gatt) }
        all.append(teachSubscriptionService())
        if let site = siteSubscriptionService() { all.append(site) }
        if let watchdog = SystemdWatchdog(environment: ProcessEnvironment.current()) {
            // Healthy while the loop keeps handling its once-a-second tick.
            all.append(
                TaskService("watchdog") { [logger, heartbeat] in
                    await watchdog.run(
                        isHealthy: { heartbeat.isAlive() },
                        onError: { logger.warning("systemd watchdog: \($0)") })
                })
        }
        all.append(
            TaskService("tick") { [mailbox] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    mailbox.post(.tick)
                }
            })
        all.append(
            StopOnlyService("source") { [source, mailbox] in
                source.stop()
                mailbox.close()
            })
        all.append(loop)
        return DaemonServices(publisher: publisherService, loop: loop, all: all)
    }
}

/// The publisher's notices (snapshot requests go to the loop's mailbox, the rest is logged), until they end
/// with delivery (`DeliveryDriver.finish`, by the loop). Runs once `gate` opens with true (the loop started
/// delivery); opened with false (by `stop()` before that) it never runs.
final class DaemonPublisherService: Service {
    let name = "publisher"
    let publisher: EventPublisher
    let mailbox: EventMailbox<DaemonInput>
    let logger: Logger
    let gate = Latch<Bool>()

    init(publisher: EventPublisher, mailbox: EventMailbox<DaemonInput>, logger: Logger) {
        self.publisher = publisher
        self.mailbox = mailbox
        self.logger = logger
    }

    /// True once the publisher was started.
    var ran: Bool { gate.value == true }

    func run() async {
        guard await gate.wait() == true else { return }
        // Ends once delivery has finished and every notice was handled.
        for await notice in publisher.notices {
            if case let .snapshotRequested(reason) = notice { mailbox.post(.snapshot(reason.rawValue)) }
            Daemon.log(notice, to: logger)
        }
    }

    /// Not started yet: it never will be. Started, its notices end with delivery (the loop, stopped first).
    func stop() async {
        gate.open(false)
    }
}

/// The daemon's loop (`Daemon.runLoop`): the only task that touches the `Daemon`, which is not Sendable.
/// Invariant (why `@unchecked Sendable` holds): `daemon` is used by `run()` only, delivery included (its wait at
/// the end and its stop are part of `run()`). `stop()` only posts to the mailbox and opens a latch.
final class DaemonLoopService: Service, @unchecked Sendable {
    let name = "loop"
    private let daemon: Daemon
    private let mailbox: EventMailbox<DaemonInput>
    private let publisherGate: Latch<Bool>
    private let stopRequested: Latch<ServiceGroup.Reason>
    private let state = Mutex<(reason: ServiceGroup.Reason?, exitCode: Int32)>((nil, ExitCode.software))

    init(daemon: Daemon, publisherGate: Latch<Bool>) {
        self.daemon = daemon
        self.mailbox = daemon.mailbox
        self.publisherGate = publisherGate
        self.stopRequested = daemon.stopRequested
    }

    /// The exit code: the loop's, or the drain's when delivery did not finish.
    var exitCode: Int32 { state.withLock { $0.exitCode } }

    /// Why the group stops (before `stop()`), for the loop's log line and exit code.
    func stopping(because reason: ServiceGroup.Reason) { state.withLock { $0.reason = reason } }

    func run() async {
        let code = await daemon.runLoopOnItsThread(publisherGate: publisherGate)
        state.withLock { $0.exitCode = code }
    }

    func stop() async {
        let reason = state.withLock { $0.reason } ?? .finished(name)
        stopRequested.open(reason)
        _ = mailbox.post(.stop(reason))
    }
}
