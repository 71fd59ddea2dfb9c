import BeaconCore
import Synchronization

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
    private let stopRequested = Atomic<Bool>(false)
    private let deliveredCount = Atomic<UInt64>(0)
    private let failureBox = Mutex<Failure?>(nil)

    /// Shortest pause between paced events, the scanner's `batch_window_ms` (at least 1 ms): a paced replay
    /// hands over one batch per window as the live reading thread does (at 5,000 reports/s and 25 ms, 40
    /// wake-ups a second rather than 5,000); timestamps are unaffected.
    let pacingQuantum: Duration

    /// - Parameter batchWindow: seconds, `scanner.batch_window_ms` / 1000.
    public init(
        path: String, speed: Double = 0, maxIdleGap: Double? = ReplaySource.defaultMaxIdleGap,
        batchWindow: Double = ScannerSettings.defaultBatchWindowMilliseconds / 1000
    ) {
        self.path = path
        self.speed = speed.isFinite && speed > 0 ? speed : 0
        self.maxIdleGap = maxIdleGap.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let window = batchWindow.isFinite ? min(1, max(0.001, batchWindow)) : 0.025
        self.pacingQuantum = .microseconds(Int64((window * 1e6).rounded()))
    }

    /// The default cap of a paced replay's pauses (`scanner.replay_max_gap_s`).
    public static let defaultMaxIdleGap = ScannerSettings.defaultReplayMaxGap

    public var statistics: HCISourceStatistics {
        HCISourceStatistics(delivered: deliveredCount.load(ordering: .relaxed))
    }
    public var failure: (any Error)? { failureBox.withLock { $0 } }
    public func stop() { stopRequested.store(true, ordering: .relaxed) }
    public var isStopped: Bool { stopRequested.load(ordering: .relaxed) }

    /// Events handed over in one batch at most when replaying as fast as possible.
    static let batchLimit = 256

    /// Opens the capture and checks its header; throws `Failure` when it cannot be read or is not btsnoop.
    /// The records are then read incrementally by a task of their own, which hands them to `sink` in batches:
    /// at speed 0 up to `batchLimit` at a time, paced one batch per pacing quantum (everything due by then),
    /// waiting while the sink is full (memory does not grow with the capture). Damage found on the way ends
    /// the replay and is reported through `failure`; the sink is finished at the end.
    public func start(into sink: any HCIEventSink) async throws {
        let reader: BTSnoopFileReader
        do { reader = try BTSnoopFileReader(path: path) } catch {
            throw Failure(path: path, failure: error, atOpen: true)
        }
        let cursor = ReplayCursor(reader: reader, speed: speed, maxIdleGap: maxIdleGap)
        Task { [self] in
            await pump(cursor, into: sink)
            sink.finish()
        }
    }

    private func pump(_ cursor: ReplayCursor, into sink: any HCIEventSink) async {
        var batch: [CapturedHCIEvent] = []
        func handOver() async -> Bool {
            guard !batch.isEmpty else { return true }
            let count = batch.count
            guard await sink.deliver(batch) else { return false }
            deliveredCount.add(UInt64(count), ordering: .relaxed)
            batch.removeAll(keepingCapacity: true)
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
                // Not due yet: hand over what is, then sleep at least `pacingQuantum` (events due meanwhile
                // then go out together, at most that late), in slices so that stop() takes effect within 100 ms.
                guard await handOver() else { return }
                var remaining = max(delay, pacingQuantum)
                while remaining > .zero, !stopRequested.load(ordering: .relaxed) {
                    let slice = min(remaining, Duration.milliseconds(100))
                    try? await Task.sleep(for: slice)
                    remaining -= slice
                }
                guard !stopRequested.load(ordering: .relaxed) else { return }
            }
            batch.append(event)
            if batch.count >= Self.batchLimit { guard await handOver() else { return } }
        }
        guard !stopRequested.load(ordering: .relaxed) else { return }
        _ = await handOver()
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
