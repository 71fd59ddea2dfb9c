import BeaconCore
import Synchronization

/// Position in a replay and the pacing schedule: event i is due at start + (t_i - t_0) / speed.
final class ReplayCursor: Sendable {
    private struct State {
        var index = 0
        var start: ContinuousClock.Instant?
    }
    private let events: [CapturedHCIEvent]
    private let speed: Double
    private let state = Mutex(State())

    init(events: [CapturedHCIEvent], speed: Double) {
        self.events = events
        self.speed = speed
    }

    /// The next event and how long to wait before delivering it; nil at the end.
    func next() -> (CapturedHCIEvent, Duration)? {
        state.withLock { state in
            guard state.index < events.count else { return nil }
            let event = events[state.index]
            state.index += 1
            guard speed > 0, let first = events.first else { return (event, .zero) }
            let now = ContinuousClock.now
            let start = state.start ?? now
            state.start = start
            let offset = max(0, event.timestamp - first.timestamp) / speed
            let due = start + .nanoseconds(Int64(min(offset, 1e9) * 1e9))
            return (event, due > now ? due - now : .zero)
        }
    }
}
