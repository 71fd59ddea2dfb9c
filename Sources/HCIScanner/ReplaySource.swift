import BeaconCore
import Synchronization

/// Feeds the HCI events of a btsnoop capture, with the capture's timestamps, as fast as possible or paced at a
/// speed factor (1 = real time). Delivers the same events the live scanner does (LE Meta events); the stream
/// finishes at the end of the capture. A capture cut short delivers what precedes the damage and then
/// reports the damage through `failure`.
public final class ReplaySource: HCIEventSource, Sendable {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "replay \(path): \(message)" }
    }

    public let path: String
    /// 0 as fast as possible; otherwise capture seconds per real second.
    public let speed: Double
    private let stopRequested = Atomic<Bool>(false)
    private let deliveredCount = Atomic<UInt64>(0)
    private let failureBox = Mutex<Failure?>(nil)

    /// Shortest pause between paced events: a replay of 5,000 reports/s wakes about 100 times a second rather
    /// than 5,000 (a wake-up per report costs more than the pipeline's work on it); timestamps are unaffected.
    static let pacingQuantum = Duration.milliseconds(10)

    public init(path: String, speed: Double = 0) {
        self.path = path
        self.speed = speed.isFinite && speed > 0 ? speed : 0
    }

    public var statistics: HCISourceStatistics { HCISourceStatistics(delivered: deliveredCount.load(ordering: .relaxed)) }
    public var failure: (any Error)? { failureBox.withLock { $0 } }
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    /// Opens the capture and checks its header; throws `Failure` when it cannot be read or is not btsnoop.
    /// The records are then read incrementally as the stream is consumed (memory does not grow with the
    /// capture); damage found on the way ends the stream and is reported through `failure`.
    public func events() async throws -> AsyncStream<CapturedHCIEvent> {
        let reader: BTSnoopFileReader
        do { reader = try BTSnoopFileReader(path: path) } catch {
            throw Failure(path: path, failure: error)
        }
        return stream(from: ReplayCursor(reader: reader, speed: speed))
    }

    private func stream(from cursor: ReplayCursor) -> AsyncStream<CapturedHCIEvent> {
        AsyncStream(unfolding: { [self] in
            guard !stopRequested.load(ordering: .relaxed) else { return nil }
            let next: (CapturedHCIEvent, Duration)?
            do throws(BTSnoopFileReader.Failure) { next = try cursor.next() } catch {
                failureBox.withLock { $0 = Failure(path: path, failure: error) }
                return nil
            }
            guard let (event, delay) = next else { return nil }
            // Sleep at least `pacingQuantum` (events due meanwhile then go out together, at most that late),
            // in slices so that stop() takes effect within 100 ms.
            var remaining = delay > .zero ? max(delay, Self.pacingQuantum) : .zero
            while remaining > .zero, !stopRequested.load(ordering: .relaxed) {
                let slice = min(remaining, Duration.milliseconds(100))
                try? await Task.sleep(for: slice)
                remaining -= slice
            }
            guard !stopRequested.load(ordering: .relaxed) else { return nil }
            deliveredCount.add(1, ordering: .relaxed)
            return event
        })
    }
}

extension ReplaySource.Failure {
    init(path: String, failure: BTSnoopFileReader.Failure) {
        switch failure {
        case let .io(error): self.init(path: path, message: error.description)
        case let .damaged(error): self.init(path: path, message: error.description)
        }
    }
}

/// Position in a replay and the pacing schedule: event i is due at start + (t_i - t_0) / speed, t_0 being
/// the first event's capture time. Reads the capture through `BTSnoopFileReader` (bounded memory).
///
/// `@unchecked Sendable`: the reader (a file descriptor and its buffer) is touched only under `state`'s lock.
final class ReplayCursor: @unchecked Sendable {
    private struct State {
        var start: ContinuousClock.Instant?
        var firstTimestamp: Timestamp?
    }
    private let reader: BTSnoopFileReader
    private let speed: Double
    private let state = Mutex(State())

    init(reader: BTSnoopFileReader, speed: Double) {
        self.reader = reader
        self.speed = speed
    }

    /// The next LE Meta event and how long to wait before delivering it; nil at the end of the capture.
    /// Throws at damage (what precedes it has been delivered).
    func next() throws(BTSnoopFileReader.Failure) -> (CapturedHCIEvent, Duration)? {
        try state.withLock { (state) throws(BTSnoopFileReader.Failure) -> (CapturedHCIEvent, Duration)? in
            var found: CapturedHCIEvent?
            while found == nil {
                guard let record = try reader.next() else { return nil }
                guard let event = record.hciEvent(datalink: reader.datalink), event.first == 0x3E else { continue }
                found = CapturedHCIEvent(timestamp: record.unixTime, bytes: Array(event))
            }
            guard let event = found else { return nil }
            guard speed > 0 else { return (event, .zero) }
            let first = state.firstTimestamp ?? event.timestamp
            state.firstTimestamp = first
            let now = ContinuousClock.now
            let start = state.start ?? now
            state.start = start
            let offset = max(0, event.timestamp - first) / speed
            let due = start + .nanoseconds(Int64(min(offset, 1e9) * 1e9))
            return (event, due > now ? due - now : .zero)
        }
    }
}
