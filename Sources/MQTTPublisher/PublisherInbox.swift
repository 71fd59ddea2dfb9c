import Synchronization

/// The publisher's input queue (`EventPublisher.Input`, in arrival order) and who handles it.
///
/// Two ways to consume it, one at a time:
/// - **its own task**: `EventPublisher.run()` waits in `next()` and handles one input at a time;
/// - **driven** (`EventPublisher.drive(wake:)`): the owner's task handles the inputs itself
///   (`EventPublisher.service()`), so delivery runs inline on the daemon's loop and costs no hand-over to
///   another task. The inbox then calls `wake` (once, until the inputs are taken) when an input arrives that
///   should not wait for the owner's next turn. Acknowledgements while delivery is live with room in its
///   window are not such an input (`acknowledgementsUrgent`): they are picked up on the next turn (a publish
///   or a tick), which saves a wake-up of the loop per batch.
///
/// Whoever holds the inbox (`hold`, `tryHold` or `next` ... `unhold`) is the only one handling inputs; the run
/// task takes none while the inbox is driven. Nobody blocks: waiting is a suspended task, resumed outside
/// the lock.
final class PublisherInbox: Sendable {
    private struct State {
        var inputs: [EventPublisher.Input] = []
        /// The run task waiting in `next()` for an input it may take.
        var consumer: CheckedContinuation<Void, Never>?
        /// Tasks waiting in `hold()` for the holder to let go.
        var holders: [CheckedContinuation<Void, Never>] = []
        /// Tasks waiting in `selfRunning()` for the end of driven mode.
        var released: [CheckedContinuation<Void, Never>] = []
        /// Driven: called when an input should be handled soon.
        var wake: (@Sendable () -> Void)?
        /// `wake` was called and the inputs were not taken since.
        var announced = false
        /// Someone holds the inbox (is handling inputs).
        var busy = false
        /// No more inputs are queued (`finish`).
        var finished = false

        /// The run task may take an input now (or learn that there will be none).
        var consumerReady: Bool { (wake == nil && !busy && !inputs.isEmpty) || (finished && !busy) }
    }

    /// What to resume or call, decided under the lock and done after it.
    private struct Wakeups {
        var continuations: [CheckedContinuation<Void, Never>] = []
        var wake: (@Sendable () -> Void)?

        func perform() {
            for continuation in continuations { continuation.resume() }
            wake?()
        }
    }

    private let state = Mutex(State())
    /// Set by the driver after each turn: acknowledgements should be handled at once (draining, stopping, a
    /// window filling up) rather than on the next turn.
    let acknowledgementsUrgent = Atomic<Bool>(true)

    /// Queues an input; resumes the run task, or (driven) calls `wake` unless `wake` is false or the input can
    /// wait for the driver's next turn.
    func put(_ input: EventPublisher.Input, wake: Bool = true) {
        var urgent = wake
        if urgent, case .acknowledgements = input { urgent = acknowledgementsUrgent.load(ordering: .relaxed) }
        var wakeups = Wakeups()
        state.withLock { state in
            guard !state.finished else { return }
            if let superseded = state.inputs.lastIndex(where: { Self.supersedes(input, $0) }) {
                state.inputs.remove(at: superseded)
            }
            state.inputs.append(input)
            if state.wake != nil {
                if urgent { Self.announce(&state, &wakeups) }
            } else {
                Self.resumeConsumer(&state, &wakeups)
            }
        }
        wakeups.perform()
    }

    /// Holds the inbox once nobody else does (suspends until then).
    func hold() async {
        while true {
            let held = state.withLock { state -> Bool in
                guard !state.busy else { return false }
                state.busy = true
                return true
            }
            if held { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.busy else { return true }
                    state.holders.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Holds the inbox if nobody does; false when someone does (they take what is waiting).
    func tryHold() -> Bool {
        state.withLock { state -> Bool in
            guard !state.busy else { return false }
            state.busy = true
            return true
        }
    }

    /// The holder: every waiting input, in order; nil when none is waiting.
    func takeHeld() -> [EventPublisher.Input]? {
        state.withLock { state -> [EventPublisher.Input]? in
            state.announced = false
            guard !state.inputs.isEmpty else { return nil }
            defer { state.inputs.removeAll(keepingCapacity: true) }
            return state.inputs
        }
    }

    /// The holder lets go. Inputs that arrived meanwhile go to the run task, or (driven) are announced.
    func unhold() {
        let urgentAcknowledgements = acknowledgementsUrgent.load(ordering: .relaxed)
        var wakeups = Wakeups()
        state.withLock { state in
            state.busy = false
            wakeups.continuations = state.holders
            state.holders.removeAll()
            if state.wake != nil {
                let urgent = state.inputs.contains { input in
                    if case .acknowledgements = input { return urgentAcknowledgements }
                    return true
                }
                if urgent { Self.announce(&state, &wakeups) }
            } else {
                Self.resumeConsumer(&state, &wakeups)
            }
        }
        wakeups.perform()
    }

    /// The run task: holds the inbox and returns the next input, once one is waiting and the inbox is not
    /// driven; nil once finished. Call `unhold()` after handling an input.
    func next() async -> EventPublisher.Input? {
        while true {
            let taken = state.withLock { state -> EventPublisher.Input?? in
                guard state.consumerReady else { return nil }
                if state.finished { return .some(nil) }
                state.busy = true
                return .some(state.inputs.removeFirst())
            }
            if let taken { return taken }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard !state.consumerReady else { return true }
                    state.consumer = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Driven mode: the caller's task handles the inputs (`wake` when one should be handled soon).
    func drive(wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.wake = wake
            state.announced = false
        }
    }

    /// Back to the run task: it takes whatever is waiting.
    func release() {
        var wakeups = Wakeups()
        state.withLock { state in
            guard state.wake != nil else { return }
            state.wake = nil
            wakeups.continuations = state.released
            state.released.removeAll()
            Self.resumeConsumer(&state, &wakeups)
        }
        wakeups.perform()
    }

    var isDriven: Bool { state.withLock { $0.wake != nil } }

    /// Returns once the inbox is not driven (at once when it is not, or once it is finished).
    func selfRunning() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.wake != nil, !state.finished else { return true }
                state.released.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// No more inputs are queued; waiting ones are dropped; `next()` returns nil.
    func finish() {
        var wakeups = Wakeups()
        state.withLock { state in
            state.finished = true
            state.wake = nil
            state.inputs.removeAll()
            wakeups.continuations = state.released
            state.released.removeAll()
            Self.resumeConsumer(&state, &wakeups)
        }
        wakeups.perform()
    }

    /// Whether `new` makes the waiting `old` pointless, so the inbox keeps only `new`: a tick (one waiting tick
    /// does everything many would: the handler reads the clock), and an inbound message on the same topic (only
    /// Home Assistant's status topic reaches the inbox, where the newest `online`/`offline` is what matters).
    ///
    /// This is what bounds the inbox. Without it, a broker or a client flooding `homeassistant/status`, or ticks
    /// arriving while the run task is busy, would grow it without limit. What else waits is bounded by its
    /// producer: at most one `.mailbox` and one `.acknowledgements` marker (queued only when their list was
    /// empty), connection events (one per connection attempt, attempts spaced by the reconnect backoff,
    /// `mqtt.reconnect_min_s` to `reconnect_max_s`), SUBACKs (one per subscription per connect), and snapshots,
    /// discovery and subscriptions, which the daemon's loop queues at most once per turn while it is also the
    /// one that takes them.
    static func supersedes(_ new: EventPublisher.Input, _ old: EventPublisher.Input) -> Bool {
        switch (new, old) {
        case (.tick, .tick): return true
        case let (.client(.message(newTopic, _)), .client(.message(oldTopic, _))): return newTopic == oldTopic
        default: return false
        }
    }

    private static func announce(_ state: inout State, _ wakeups: inout Wakeups) {
        guard !state.announced, !state.busy, let wake = state.wake else { return }
        state.announced = true
        wakeups.wake = wake
    }

    private static func resumeConsumer(_ state: inout State, _ wakeups: inout Wakeups) {
        guard state.consumerReady, let consumer = state.consumer else { return }
        state.consumer = nil
        wakeups.continuations.append(consumer)
    }
}
