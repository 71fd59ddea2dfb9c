import BeaconFormats
import BeaconModel
import BeaconRuntime
import CBlueZ
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The live source: scans on one adapter through a raw HCI socket and delivers every LE Meta event.
///
/// All socket work happens on one dedicated thread (never on the Swift concurrency pool). Each wake-up drains
/// the socket (every event already there, up to `batchLimit`) and hands one batch to the sink without waiting
/// (`HCIEventSink.offer`: the consumer's bounded mailbox drops its oldest on overload, counted here), then lets
/// reports gather for a window (`BatchWindow`: `batch_window_ms`, growing toward `batch_window_max_ms` at low
/// rates). Supervision (`ScanSupervisor`) restarts the scan and power-cycles the adapter when it stalls or fails.
/// The thread sleeps in `poll` until a report, a supervision deadline or `stop()` (a byte on its wake-up pipe):
/// an idle scanner does not wake periodically. Sendable: every stored property is immutable or synchronized; the
/// socket lives only on the reading thread; the wake-up pipe is written by `stop()` and read by the thread only
/// through `poll`, and closed in `deinit` (the thread retains the scanner while it runs).
public final class HCIScanner: HCIEventSource, Sendable {
    public let settings: ScannerSettings
    private let selector: AdapterSelector
    private let parameters: ScanParameters
    private let onNotice: @Sendable (HCIScannerNotice) -> Void
    /// Where the traffic is recorded, if anywhere.
    public let recorder: (any HCITrafficRecorder)?
    /// The identity beacon advertised beside the scan (self-calibration), if any.
    public let advertising: AdvertisingParameters?
    private let deliveredCount = Atomic<UInt64>(0)
    private let droppedCount = Atomic<UInt64>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let restarts = Atomic<UInt64>(0)
    private let powerCycles = Atomic<UInt64>(0)
    private let reopens = Atomic<UInt64>(0)
    private let failureBox = Mutex<HCIError?>(nil)
    /// A connected socket that carries H4 event packets instead of an adapter (`init(settings:feedDescriptor:)`).
    private let feedDescriptor: Int32?
    /// The pause after each hand-over.
    public let batchWindow: BatchWindow
    /// `stop()` writes a byte here to end the reading thread's `poll` at once: read end first; -1 when the pipe
    /// could not be made (the thread then looks at the stop flag every 250 ms instead).
    private let wakeDescriptors: WakePipe

    /// - Parameters:
    ///   - settings: must have passed `validate()`; an invalid adapter or scan timing throws at `events()`.
    ///   - recorder: receives every command sent and event read (e.g. a btsnoop file).
    ///   - onNotice: called on the reading thread for each step worth logging; must not block.
    ///   - batchWindow: the pause after each hand-over; nil: `settings.effectiveBatchWindow(esphomeProxy: false)`.
    ///   - advertising: an identity beacon to advertise beside the scan (started with every session; a failure
    ///     is a notice, never a stop).
    public convenience init(
        settings: ScannerSettings, recorder: (any HCITrafficRecorder)? = nil, batchWindow: BatchWindow? = nil,
        advertising: AdvertisingParameters? = nil,
        onNotice: @escaping @Sendable (HCIScannerNotice) -> Void = { _ in }
    ) {
        self.init(
            settings: settings, recorder: recorder, feedDescriptor: nil, batchWindow: batchWindow,
            advertising: advertising, onNotice: onNotice)
    }

    /// A scanner that reads H4 event packets (one per datagram) from `feedDescriptor`, a connected
    /// `SOCK_SEQPACKET` socket, instead of an adapter: the same reading thread, queue and hand-over as a
    /// live scan, with a socket pair standing in for the controller (the live-mode bench, tests). No command
    /// is sent and supervision does not act; the end of the feed (EOF) ends the stream. The scanner owns
    /// and closes the descriptor.
    public convenience init(
        settings: ScannerSettings, feedDescriptor: Int32, batchWindow: BatchWindow? = nil,
        onNotice: @escaping @Sendable (HCIScannerNotice) -> Void = { _ in }
    ) {
        self.init(
            settings: settings, recorder: nil, feedDescriptor: feedDescriptor, batchWindow: batchWindow,
            advertising: nil, onNotice: onNotice)
    }

    private init(
        settings: ScannerSettings, recorder: (any HCITrafficRecorder)?, feedDescriptor: Int32?,
        batchWindow: BatchWindow?, advertising: AdvertisingParameters?,
        onNotice: @escaping @Sendable (HCIScannerNotice) -> Void
    ) {
        self.settings = settings
        self.selector = settings.adapterSelector ?? .index(-1)
        self.parameters =
            settings.scanParameters
            ?? ScanParameters(active: settings.active, intervalUnits: 0x00A0, windowUnits: 0x00A0)
        self.recorder = recorder
        self.advertising = advertising
        self.onNotice = onNotice
        self.feedDescriptor = feedDescriptor
        self.batchWindow = batchWindow ?? settings.effectiveBatchWindow(esphomeProxy: false)
        self.wakeDescriptors = WakePipe.make()
    }

    deinit {
        wakeDescriptors.close()
    }

    public var statistics: HCISourceStatistics {
        HCISourceStatistics(
            delivered: deliveredCount.load(ordering: .relaxed), dropped: droppedCount.load(ordering: .relaxed),
            scanRestarts: restarts.load(ordering: .relaxed),
            adapterPowerCycles: powerCycles.load(ordering: .relaxed),
            adapterReopens: reopens.load(ordering: .relaxed))
    }

    public var failure: (any Error)? { failureBox.withLock { $0 } }

    /// Events read per wake-up at most (one batch); the rest waits in the kernel for the next round.
    static let batchLimit = 256

    /// Opens and configures the adapter on the reading thread and returns once scanning runs; throws
    /// `HCIError` when it cannot start (no Bluetooth, no permission, no adapter, ...). Single use.
    public func start(into sink: any HCIEventSink) async throws {
        guard settings.adapterSelector != nil || feedDescriptor != nil else {
            throw HCIError(kind: .adapterAbsent, adapter: settings.adapter, call: "scanner.adapter", errno: EINVAL)
        }
        guard settings.scanParameters != nil else {
            throw HCIError(
                kind: .system, adapter: settings.adapter, call: "scanner.interval_ms/window_ms", errno: EINVAL)
        }
        guard !started.exchange(true, ordering: .relaxed) else {
            throw HCIError(
                kind: .system, adapter: settings.adapter, call: "scanner.start (single use)", errno: EALREADY)
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result = DedicatedThread.start(name: "bb-hci-reader") { [self] in
                self.runLoop(
                    sink: sink,
                    startup: { error in
                        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                    })
            }
            if result != 0 {
                continuation.resume(
                    throwing: HCIError(
                        kind: .system, adapter: settings.adapter,
                        call: "pthread_create", errno: result))
            }
        }
    }

    /// Asks the reading thread to stop scanning, restore the socket filter and close; the sink then finishes.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wakeDescriptors.wake()
    }

    /// The longest the reading thread waits without looking at the stop flag: no limit with the wake-up pipe.
    private var stopCheckInterval: Double { wakeDescriptors.isOpen ? 3600 : 0.25 }

    /// Waits `seconds` or until `stop()`, whichever comes first (off the concurrency pool: the reading thread).
    private func pauseUnlessStopped(_ seconds: Double) {
        var descriptor = pollfd(fd: wakeDescriptors.read, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(min(seconds, stopCheckInterval) * 1000))
    }

    public var isStopped: Bool { stopRequested.load(ordering: .relaxed) }

    // MARK: - The reading thread

    private func runLoop(sink: any HCIEventSink, startup: (HCIError?) -> Void) {
        let tap: ((_ packet: [UInt8], _ received: Bool, _ time: Timestamp) -> Void)? = recorder.map { recorder in
            { packet, received, time in recorder.record(packet: packet, received: received, timestamp: time) }
        }
        var session: ScanSession?
        do {
            session = try openSession(tap: tap)
        } catch {
            failureBox.withLock { $0 = error }
            recorder?.close()
            startup(error)
            return
        }
        startup(nil)
        var supervisor = ScanSupervisor(policy: .init(stallTimeout: settings.stallTimeoutSeconds))
        supervisor.scanStarted(at: SystemClock.monotonic())
        var batch: [CapturedHCIEvent] = []
        batch.reserveCapacity(Self.batchLimit)
        var feedEnded = false
        var lastRead = SystemClock.monotonic()
        let cap = stopCheckInterval

        while !feedEnded, !stopRequested.load(ordering: .relaxed) {
            let now = SystemClock.monotonic()
            let wait = min(cap, max(0.001, (supervisor.nextDeadline ?? now + cap) - now))
            var action: ScanSupervisor.Action?
            if let current = session {
                switch current.socket.readEvents(
                    into: &batch, timeoutMilliseconds: Int32(wait * 1000), limit: Self.batchLimit,
                    wakeDescriptor: wakeDescriptors.read)
                {
                case .events:
                    let woke = SystemClock.monotonic()
                    let count = batch.count
                    let full = count >= Self.batchLimit
                    action = handle(&batch, supervisor: &supervisor)
                    hand(consume batch, to: sink)
                    batch = sink.nextBatch(capacity: Self.batchLimit)
                    // Let the next events gather in the kernel's socket buffer: at most one wake-up (of this
                    // thread and of the loop) per window, whatever the report rate, unless the batch was full;
                    // the window grows at low rates (`BatchWindow`).
                    let window = batchWindow.next(events: count, elapsed: woke - lastRead)
                    lastRead = woke
                    let pause = window - (SystemClock.monotonic() - woke)
                    if !full, action == nil, pause > 0 { pauseUnlessStopped(pause) }
                case .timeout:
                    break
                case .failed where current.isFeed:
                    // The feed ended (EOF) or broke: nothing to recover.
                    feedEnded = true
                case let .failed(code):
                    let fault: ScanSupervisor.Fault =
                        Self.removalErrnos.contains(code)
                        ? .adapterRemoved : .readFailed(errno: code)
                    action = supervisor.faultOccurred(fault, at: SystemClock.monotonic())
                }
            } else {
                pauseUnlessStopped(wait)
            }
            if action == nil { action = supervisor.tick(at: SystemClock.monotonic()) }
            if feedDescriptor != nil { action = nil }
            while let step = action, !stopRequested.load(ordering: .relaxed) {
                action = perform(step, session: &session, supervisor: &supervisor, tap: tap)
            }
        }
        if let session {
            session.close()
            onNotice(.stopped(adapter: session.adapter.name))
        }
        recorder?.close()
        sink.finish()
    }

    /// LE Set Scan Enable and LE Set Extended Scan Enable.
    static let scanEnableOpcodes: Set<UInt16> = [0x200C, 0x2042]

    /// errno values of reads on a socket whose adapter was unregistered.
    static let removalErrnos: Set<Int32> = [ENODEV, ENXIO, EPIPE, EBADFD, ENETDOWN]

    private func openSession(tap: ((_ packet: [UInt8], _ received: Bool, _ time: Timestamp) -> Void)?) throws(HCIError)
        -> ScanSession
    {
        if let feedDescriptor {
            return ScanSession(
                feed: HCISocket(adopting: feedDescriptor, label: "feed:\(feedDescriptor)"), parameters: parameters)
        }
        let session = try ScanSession(
            selector: selector, parameters: parameters, mode: settings.extended, tap: tap,
            onBroughtUp: { onNotice(.broughtUp(adapter: $0.name)) })
        onNotice(
            .opened(
                adapter: session.adapter.name, address: session.adapter.address,
                extended: session.extended, active: parameters.active))
        if let advertising { noteAdvertising(session.startAdvertising(advertising), session: session) }
        return session
    }

    private func noteAdvertising(_ outcome: IdentityAdvertiser.Outcome, session: ScanSession) {
        switch outcome {
        case let .started(power):
            onNotice(
                .advertising(
                    adapter: session.adapter.name, extended: session.extended, txPower: power,
                    requested: advertising?.txPower ?? 0))
        case let .failed(error):
            onNotice(.advertisingFailed(adapter: session.adapter.name, error))
        }
    }

    /// Supervision's view of a batch: a report keeps the scan alive, a Hardware Error is a fault (removed
    /// from the batch; it is not for the pipeline).
    private func handle(_ batch: inout [CapturedHCIEvent], supervisor: inout ScanSupervisor) -> ScanSupervisor.Action? {
        var action: ScanSupervisor.Action?
        if batch.contains(where: { $0.eventCode == UInt8(EVT_HARDWARE_ERROR) }) {
            for event in batch where event.eventCode == UInt8(EVT_HARDWARE_ERROR) {
                let bytes = event.bytes
                action = supervisor.faultOccurred(
                    .hardwareError(code: bytes.count > 2 ? bytes[2] : 0), at: SystemClock.monotonic())
            }
            batch.removeAll { $0.eventCode == UInt8(EVT_HARDWARE_ERROR) }
        }
        if batch.contains(where: \.isAdvertisingReport) { supervisor.reportReceived(at: SystemClock.monotonic()) }
        // A GATT connection made through the kernel (it leaves the scan off), or someone else's scan enable (our
        // own replies are read by `HCISocket.send`): enable the scan again soon. Command Completes are not for
        // the pipeline.
        let takenOver = batch.contains { event in
            event.isLEConnectionComplete
                || HCICommandReply(event: event.bytes).map { Self.scanEnableOpcodes.contains($0.opcode) } ?? false
        }
        if takenOver { supervisor.scanTakenOver(at: SystemClock.monotonic()) }
        batch.removeAll { $0.eventCode == UInt8(EVT_CMD_COMPLETE) }
        return action
    }

    /// One hand-over per wake-up; a sink that refuses (its consumer is gone) stops the scanner.
    /// The batch is passed on (`consuming`), so the loop holds the only reference and can give the buffer back.
    private func hand(_ batch: consuming [CapturedHCIEvent], to sink: any HCIEventSink) {
        let count = batch.count
        guard count > 0 else { return }
        let offer = sink.offer(consume batch)
        guard offer.accepted else {
            stopRequested.store(true, ordering: .relaxed)
            return
        }
        deliveredCount.add(UInt64(count), ordering: .relaxed)
        if offer.dropped > 0 { droppedCount.add(UInt64(offer.dropped), ordering: .relaxed) }
    }

    /// Performs one supervision step; returns the next step when it must follow at once.
    private func perform(
        _ action: ScanSupervisor.Action, session: inout ScanSession?,
        supervisor: inout ScanSupervisor,
        tap: ((_ packet: [UInt8], _ received: Bool, _ time: Timestamp) -> Void)?
    ) -> ScanSupervisor.Action? {
        onNotice(.recovering(action))
        do throws(HCIError) {
            switch action {
            case .restartScan:
                restarts.add(1, ordering: .relaxed)
                guard let current = session else {
                    throw HCIError(kind: .adapterAbsent, adapter: settings.adapter, call: "scan restart", errno: ENODEV)
                }
                if let outcome = try current.restartScan() { noteAdvertising(outcome, session: current) }
            case .powerCycle:
                powerCycles.add(1, ordering: .relaxed)
                session?.close()
                session = nil
                let adapter = try HCIAdapter.resolve(selector)
                try? HCIAdapter.down(deviceID: adapter.deviceID, label: adapter.name)
                try HCIAdapter.up(deviceID: adapter.deviceID, label: adapter.name)
                session = try openSession(tap: tap)
            case .reopen:
                reopens.add(1, ordering: .relaxed)
                session?.close()
                session = nil
                session = try openSession(tap: tap)
            }
            supervisor.scanStarted(at: SystemClock.monotonic())
            onNotice(.recovered(action))
            return nil
        } catch {
            onNotice(.recoveryFailed(action, error))
            return supervisor.recoveryFailed(
                at: SystemClock.monotonic(), error: error.description,
                adapterGone: error.adapterGone)
        }
    }
}
