import Synchronization

/// The publisher's inputs (`EventPublisher.Input`, in arrival order) for its one owner: the task that holds the
/// publisher's `DeliveryDriver` from start to stop (the daemon's loop, or `EventPublisher.run()`'s task). Nobody
/// else takes them, so there is nothing to hand over and nothing to hold.
///
/// The owner either waits here (`wait()`, resumed by the next input of any kind) or elsewhere: the daemon's loop
/// waits in its own mailbox, and `wake` (given at the start) pokes it when an input should not wait for the
/// loop's next turn. Acknowledgements while delivery is live with room in its window are not such an input
/// (`acknowledgementsUrgent`): they are picked up on the next turn (a batch or the tick), which saves a wake-up
/// of the loop per batch.
///
/// Acknowledgements from the network thread are kept in one list beside the inputs (message id and MQTT 5 reason
/// code), announced by one `.acknowledgements` input when the list was empty, so a burst costs one input.
/// Bounds: see `supersedes`. Nobody blocks: the owner waits suspended, resumed outside the lock.
final class PublisherInbox: Sendable {
    /// An acknowledgement: 0 = accepted; 0x80 and above = refused (MQTT 5); `at`: when it reached the network
    /// thread (the publisher's clock), the end of the event's delivery latency.
    struct Acknowledgement: Sendable {
        var messageID: Int32
        var reasonCode: Int32
        var at: Double
    }

    private struct State {
        var inputs: [EventPublisher.Input] = []
        var acknowledgements: [Acknowledgement] = []
        /// The owner waiting in `wait()`.
        var waiter: CheckedContinuation<Void, Never>?
        /// Called when an input should be handled soon and the owner does not wait here.
        var wake: (@Sendable () -> Void)?
        /// `wake` was called and the inputs were not taken since.
        var announced = false
        /// No more inputs are queued (`finish`).
        var finished = false
    }

    private let state = Mutex(State())
    /// Set by the owner after each turn: acknowledgements should be handled at once (draining, stopping, a window
    /// filling up) rather than on the next turn.
    private let acknowledgementsUrgent = Atomic<Bool>(true)

    /// The owner's wake-up when it waits elsewhere (set once, at the start).
    func setWake(_ wake: (@Sendable () -> Void)?) {
        state.withLock { $0.wake = wake }
    }

    /// Queues an input; resumes the owner waiting in `wait()`, or calls `wake` unless `wake` is false or the input
    /// can wait for the owner's next turn.
    func put(_ input: EventPublisher.Input, wake: Bool = true) {
        var urgent = wake
        if urgent, case .acknowledgements = input { urgent = acknowledgementsUrgent.load(ordering: .relaxed) }
        let resume = state.withLock { state -> Resume in
            guard !state.finished else { return Resume() }
            if let superseded = state.inputs.lastIndex(where: { Self.supersedes(input, $0) }) {
                state.inputs.remove(at: superseded)
            }
            state.inputs.append(input)
            return Self.resume(&state, urgent: urgent)
        }
        resume.perform()
    }

    /// An acknowledgement from the network thread; the list's first since the owner took it is announced.
    func acknowledge(_ messageID: Int32, reasonCode: Int32, at time: Double) {
        let first = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.acknowledgements.append(Acknowledgement(messageID: messageID, reasonCode: reasonCode, at: time))
            return state.acknowledgements.count == 1
        }
        if first { put(.acknowledgements) }
    }

    /// The owner: every waiting input, in order (empty when none).
    func take(into inputs: inout [EventPublisher.Input]) {
        inputs.removeAll(keepingCapacity: true)
        state.withLock { state in
            state.announced = false
            swap(&state.inputs, &inputs)
        }
    }

    /// The owner: the acknowledgements in `buffer` (emptied first); the list gets `buffer`'s storage, so once both
    /// have grown neither side allocates.
    func takeAcknowledgements(into buffer: inout [Acknowledgement]) {
        buffer.removeAll(keepingCapacity: true)
        state.withLock { swap(&$0.acknowledgements, &buffer) }
    }

    /// The owner, after a turn: whether acknowledgements are urgent from now on; waiting ones are announced if so.
    func turnEnded(acknowledgementsUrgent urgent: Bool) {
        acknowledgementsUrgent.store(urgent, ordering: .relaxed)
        guard urgent else { return }
        let resume = state.withLock { state -> Resume in
            guard !state.inputs.isEmpty else { return Resume() }
            return Self.resume(&state, urgent: true)
        }
        resume.perform()
    }

    /// The owner waits (suspended) until an input is waiting, or the inbox is finished.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.inputs.isEmpty, !state.finished else { return true }
                precondition(state.waiter == nil, "PublisherInbox has one owner")
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// No more inputs are queued; waiting ones are dropped; a waiting owner is resumed.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            state.wake = nil
            state.inputs.removeAll()
            state.acknowledgements.removeAll()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Whether `new` makes the waiting `old` pointless, so the inbox keeps only `new`: a tick (one waiting tick
    /// does everything many would: the handler reads the clock), and an inbound message on the same topic (only
    /// Home Assistant's status topic reaches the inbox, where the newest `online`/`offline` is what matters).
    ///
    /// This is what bounds the inbox. Without it, a broker or a client flooding `homeassistant/status`, or ticks
    /// arriving while the owner is busy, would grow it without limit. What else waits is bounded by its producer:
    /// at most one `.mailbox` and one `.acknowledgements` marker (queued only when their list was empty; the
    /// acknowledgements list itself holds at most the in-flight window, `mqtt.inflight_window`), connection events
    /// (one per connection attempt, attempts spaced by the reconnect backoff, `mqtt.reconnect_min_s` to
    /// `reconnect_max_s`), SUBACKs (one per subscription per connect), and snapshots, discovery and
    /// subscriptions, which the daemon's loop queues at most once per turn while it is also the one that takes
    /// them.
    static func supersedes(_ new: EventPublisher.Input, _ old: EventPublisher.Input) -> Bool {
        switch (new, old) {
        case (.tick, .tick): return true
        case let (.client(.message(newTopic, _)), .client(.message(oldTopic, _))): return newTopic == oldTopic
        default: return false
        }
    }

    /// What to resume or call, decided under the lock and done after it.
    private struct Resume {
        var waiter: CheckedContinuation<Void, Never>?
        var wake: (@Sendable () -> Void)?

        func perform() {
            waiter?.resume()
            wake?()
        }
    }

    /// The owner waiting here is resumed by any input; one waiting elsewhere is woken (once until it takes the
    /// inputs) by an urgent one.
    private static func resume(_ state: inout State, urgent: Bool) -> Resume {
        if let waiter = state.waiter {
            state.waiter = nil
            return Resume(waiter: waiter)
        }
        guard urgent, !state.announced, let wake = state.wake else { return Resume() }
        state.announced = true
        return Resume(wake: wake)
    }
}
