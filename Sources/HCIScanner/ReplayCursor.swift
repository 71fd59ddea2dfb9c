import BeaconFormats
import BeaconModel
import Synchronization

/// Position in a replay and the pacing schedule: event i is due at start + the sum of the gaps before it,
/// each gap (t_k - t_{k-1}) / speed capped at `maxIdleGap` real seconds (a capture with an hour without
/// traffic pauses a few seconds, not an hour). Reads the capture through `BTSnoopFileReader` (bounded memory).
///
/// `@unchecked Sendable`: the reader (a file descriptor and its buffer) is touched only under `state`'s lock.
final class ReplayCursor: @unchecked Sendable {
    private struct State {
        var start: ContinuousClock.Instant?
        var lastTimestamp: Timestamp?
        /// Real seconds from `start` at which the last event was due.
        var scheduled: Double = 0
    }
    private let reader: BTSnoopFileReader
    private let speed: Double
    private let maxIdleGap: Double?
    private let state = Mutex(State())

    init(reader: BTSnoopFileReader, speed: Double, maxIdleGap: Double? = nil) {
        self.reader = reader
        self.speed = speed
        self.maxIdleGap = maxIdleGap
    }

    /// The next LE Meta event and how long to wait before delivering it; nil at the end of the capture.
    /// Throws at damage (what precedes it has been delivered).
    func next() throws(BTSnoopFileReader.Failure) -> (CapturedHCIEvent, Duration)? {
        try state.withLock { (state) throws(BTSnoopFileReader.Failure) -> (CapturedHCIEvent, Duration)? in
            guard let event = try reader.nextLEMetaEvent() else { return nil }
            guard speed > 0 else { return (event, .zero) }
            let previous = state.lastTimestamp ?? event.timestamp
            state.lastTimestamp = max(previous, event.timestamp)
            var gap = max(0, event.timestamp - previous) / speed
            if let maxIdleGap { gap = min(gap, maxIdleGap) }
            state.scheduled += gap
            let now = ContinuousClock.now
            let start = state.start ?? now
            state.start = start
            let due = start + .nanoseconds(Int64(min(state.scheduled, 1e9) * 1e9))
            return (event, due > now ? due - now : .zero)
        }
    }
}
