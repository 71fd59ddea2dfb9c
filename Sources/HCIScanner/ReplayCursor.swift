import BeaconCore
import Synchronization

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
