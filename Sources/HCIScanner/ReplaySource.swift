import BeaconFormats
import BeaconRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Feeds the HCI events of a btsnoop capture, with the capture's timestamps, as fast as possible or paced at a
/// speed factor (1 = real time). Delivers the same events the live scanner does (LE Meta events); the stream
/// finishes at the end of the capture. A capture cut short delivers what precedes the damage and then
/// reports the damage through `failure`.
public final class ReplaySource: HCIEventSource, Sendable {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: Sendable, Equatable {
            /// The file does not exist, cannot be opened, or is not a regular file (a FIFO or pipe).
            case unreadable
            /// The file is not a btsnoop capture (its header).
            case notBTSnoop
            /// A record cut short or malformed in the middle: what preceded it was replayed.
            case damaged
            /// A read error in the middle of the file.
            case readError
        }

        public var path: String
        public var message: String
        public var kind: Kind
        public var description: String { "replay \(path): \(message)" }

        public init(path: String, message: String, kind: Kind) {
            self.path = path
            self.message = message
            self.kind = kind
        }
    }

    public let path: String
    /// 0 as fast as possible; otherwise capture seconds per real second.
    public let speed: Double
    /// Paced replays wait at most this long (real seconds) between two events, however far apart their
    /// timestamps are (a capture with a one-hour gap does not pause for an hour); nil: no cap.
    public let maxIdleGap: Double?
    private let started = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let deliveredCount = Atomic<UInt64>(0)
    private let failureBox = Mutex<Failure?>(nil)
    /// Written by `stop()` to end the replay thread's pause at once (-1 when the pipe could not be made: the
    /// thread then looks at the stop flag at least every 100 ms).
    private let wakeDescriptors: WakePipe

    /// The pause between paced hand-overs, as the live reading thread's (`BatchWindow`): after a batch of n
    /// events that gathered over t seconds the next one is `batchWindow.next(events: n, elapsed: t)`, so a
    /// paced replay hands over one batch per window (at 5,000 reports/s and 25 ms, 40 wake-ups a second rather
    /// than 5,000; at low rates the window grows); timestamps are unaffected.
    public let batchWindow: BatchWindow

    /// - Parameter batchWindow: the scanner's effective window (`ScannerSettings.effectiveBatchWindow`).
    public init(
        path: String, speed: Double = 0, maxIdleGap: Double? = ReplaySource.defaultMaxIdleGap,
        batchWindow: BatchWindow = ScannerSettings().effectiveBatchWindow(esphomeProxy: false)
    ) {
        self.path = path
        self.speed = speed.isFinite && speed > 0 ? speed : 0
        self.maxIdleGap = maxIdleGap.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        // At least 1 ms, at most 1 s.
        self.batchWindow = BatchWindow(
            minimum: min(1, max(0.001, batchWindow.minimum)), maximum: min(1, max(0.001, batchWindow.maximum)),
            targetEvents: batchWindow.targetEvents)
        wakeDescriptors = WakePipe.make()
    }

    deinit {
        wakeDescriptors.close()
    }

    /// The default cap of a paced replay's pauses (`scanner.replay_max_gap_s`).
    public static let defaultMaxIdleGap = ScannerSettings.defaultReplayMaxGap

    public var statistics: HCISourceStatistics {
        HCISourceStatistics(delivered: deliveredCount.load(ordering: .relaxed))
    }
    public var failure: (any Error)? { failureBox.withLock { $0 } }

    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wakeDescriptors.wake()
    }

    public var isStopped: Bool { stopRequested.load(ordering: .relaxed) }

    /// Events handed over in one batch at most.
    static let batchLimit = 256

    /// Opens the capture and checks its header; throws `Failure` when it cannot be read or is not btsnoop.
    /// The records are then read incrementally on a thread of its own (`bb-replay`: file reads are blocking
    /// calls, kept off the concurrency pool as the live reading thread is), which hands them to `sink` in
    /// batches: at speed 0 up to `batchLimit` at a time, paced one batch per window (everything due by then),
    /// waiting while the sink is full (memory does not grow with the capture). Damage found on the way ends
    /// the replay and is reported through `failure`; the sink is finished at the end. Single use.
    public func start(into sink: any HCIEventSink) async throws {
        let reader: BTSnoopFileReader
        do { reader = try BTSnoopFileReader(path: path) } catch {
            throw Failure(path: path, failure: error, atOpen: true)
        }
        guard !started.exchange(true, ordering: .relaxed) else {
            throw Failure(path: path, message: "the replay was already started", kind: .readError)
        }
        let cursor = ReplayCursor(reader: reader, speed: speed, maxIdleGap: maxIdleGap)
        let result = DedicatedThread.start(name: "bb-replay") { [self] in
            pump(cursor, into: sink)
            sink.finish()
        }
        guard result == 0 else {
            throw Failure(
                path: path, message: "cannot start the replay thread: \(String(cString: strerror(result)))",
                kind: .readError)
        }
    }

    /// The replay thread: reads, paces and hands over until the end, a stop, damage or a refusing sink.
    private func pump(_ cursor: ReplayCursor, into sink: any HCIEventSink) {
        var batch: [CapturedHCIEvent] = []
        batch.reserveCapacity(Self.batchLimit)
        // Events read since the last paced hand-over and when it was (the live reader's "since the previous
        // read"), for the next window.
        var gathered = 0
        var lastHandOver = SystemClock.monotonic()
        func handOver() -> Bool {
            guard !batch.isEmpty else { return true }
            let count = batch.count
            // Passed on whole (this thread keeps no reference), so the loop can give the buffer back.
            var handed: [CapturedHCIEvent] = []
            swap(&handed, &batch)
            guard sink.deliverWaiting(consume handed) else { return false }
            deliveredCount.add(UInt64(count), ordering: .relaxed)
            batch = sink.nextBatch(capacity: Self.batchLimit)
            return true
        }
        while !stopRequested.load(ordering: .relaxed) {
            let next: (CapturedHCIEvent, Duration)?
            do throws(BTSnoopFileReader.Failure) { next = try cursor.next() } catch {
                failureBox.withLock { $0 = Failure(path: path, failure: error, atOpen: false) }
                break
            }
            guard let (event, delay) = next else { break }
            if delay > .zero {
                // Not due yet: hand over what is, then pause at least one window (events due meanwhile then go
                // out together, at most that late); stop() ends the pause at once.
                guard handOver() else { return }
                let now = SystemClock.monotonic()
                let window = batchWindow.next(events: gathered, elapsed: now - lastHandOver)
                gathered = 0
                lastHandOver = now
                pauseUnlessStopped(max(Self.seconds(delay), window))
                guard !stopRequested.load(ordering: .relaxed) else { return }
            }
            gathered += 1
            batch.append(event)
            if batch.count >= Self.batchLimit { guard handOver() else { return } }
        }
        guard !stopRequested.load(ordering: .relaxed) else { return }
        _ = handOver()
    }

    /// Waits `seconds` or until `stop()`, whichever comes first.
    private func pauseUnlessStopped(_ seconds: Double) {
        let deadline = SystemClock.monotonic() + seconds
        while !stopRequested.load(ordering: .relaxed) {
            let left = deadline - SystemClock.monotonic()
            guard left > 0 else { return }
            // Without the pipe, look at the stop flag every 100 ms.
            let slice = wakeDescriptors.isOpen ? left : min(left, 0.1)
            var descriptor = pollfd(fd: wakeDescriptors.read, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(min(slice * 1000, 3_600_000).rounded(.up)))
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

extension ReplaySource.Failure {
    /// `atOpen`: found while opening the file and reading its header (nothing was replayed).
    init(path: String, failure: BTSnoopFileReader.Failure, atOpen: Bool) {
        switch failure {
        case let .io(error):
            self.init(
                path: path, message: error.description, kind: error.isMissingOrUnreadable ? .unreadable : .readError)
        case let .damaged(error):
            self.init(path: path, message: error.description, kind: atOpen ? .notBTSnoop : .damaged)
        }
    }
}
