import BeaconFormats
import Dispatch
import Synchronization

/// The bounded mailbox in front of one consuming task (the daemon's loop): HCI event batches from a source
/// (a reading thread or a replay task) and a few control inputs (ticks, signals, snapshot requests).
///
/// - At most `capacity` HCI events wait. `offer` (the live reading thread) never waits: the oldest waiting
///   events make room and are counted. `deliver` (a replay) waits for room instead, so nothing is lost;
///   `deliverWaiting` is the same for a producer on its own thread (the replay thread), which blocks.
/// - `next()` hands the consumer one control input (controls first: a stop is never stuck behind events) or
///   every waiting batch at once (one wake-up per burst, however many batches arrived meanwhile), or, with
///   nothing else waiting, `.poked` after `poke()`.
/// - At most `controlCapacity` controls wait; beyond that the oldest is dropped and counted.
///
/// One consumer; any number of producers. No pool thread ever blocks: the consumer and waiting producers are
/// suspended tasks (or, for `deliverWaiting`, a dedicated thread on a semaphore), resumed outside the lock.
public final class EventMailbox<Control: Sendable>: HCIEventSink, Sendable {
    public enum Item: Sendable {
        case control(Control)
        /// Every batch that was waiting, oldest first.
        case events([[CapturedHCIEvent]])
        /// The source finished and every batch before it was handed out.
        case finished
        /// `poke()` was called and nothing else was waiting: the consumer has work of its own to look at.
        case poked
    }

    /// Counters since the start.
    public struct Counters: Sendable, Equatable {
        /// HCI events accepted (including those dropped later to make room).
        public var delivered: UInt64 = 0
        /// HCI events dropped to make room.
        public var dropped: UInt64 = 0
        /// Control inputs dropped because `controlCapacity` were waiting.
        public var droppedControls: UInt64 = 0
        /// HCI events waiting now.
        public var waiting: Int = 0

        public init(delivered: UInt64 = 0, dropped: UInt64 = 0, droppedControls: UInt64 = 0, waiting: Int = 0) {
            self.delivered = delivered
            self.dropped = dropped
            self.droppedControls = droppedControls
            self.waiting = waiting
        }
    }

    private struct State: ~Copyable {
        var batches: [[CapturedHCIEvent]] = []
        var controls: [Control] = []
        var counters = Counters()
        var finished = false
        var closed = false
        /// `poke()` since the consumer last took an item.
        var poked = false
        var consumer: CheckedContinuation<Item, Never>?
        /// Producers waiting for room; resumed with nil to try again (or after `close`/`finish`).
        var producers: [CheckedContinuation<Bool?, Never>] = []
        /// Producer threads waiting for room (`deliverWaiting`); signalled to try again.
        var threads: [DispatchSemaphore] = []
        /// Emptied batch buffers given back by the consumer (`recycle`), for `spareBatch()`.
        var spares: [[CapturedHCIEvent]] = []
    }

    /// Resumptions decided under the lock, performed after it.
    private struct Wakeups {
        var consumer: (CheckedContinuation<Item, Never>, Item)?
        var producers: [CheckedContinuation<Bool?, Never>] = []
        var threads: [DispatchSemaphore] = []

        /// The consumer's item is moved out before it is resumed: the resumed task then holds the only reference
        /// (this thread may be preempted before it returns).
        mutating func perform() {
            if let (continuation, item) = consumer.take() { continuation.resume(returning: consume item) }
            for producer in producers { producer.resume(returning: nil) }
            for thread in threads { thread.signal() }
        }
    }

    public let capacity: Int
    public let controlCapacity: Int
    private let state = Mutex(State())

    public init(capacity: Int, controlCapacity: Int = 64) {
        self.capacity = max(1, capacity)
        self.controlCapacity = max(1, controlCapacity)
    }

    public var counters: Counters { state.withLock { $0.counters } }

    // MARK: Producers

    public func offer(_ batch: consuming [CapturedHCIEvent]) -> HCIEventOffer {
        guard !batch.isEmpty else { return HCIEventOffer(accepted: !isClosedOrFinished) }
        var wakeups = Wakeups()
        // Moved into the waiting batches under the lock, so no reference of this call's is left when the
        // consumer runs (it may finish with the batch before this thread returns).
        var batch = consume batch
        let offer = state.withLock { state -> HCIEventOffer in
            guard !state.closed, !state.finished else { return .closed }
            let trimmed = max(0, batch.count - capacity)
            var dropped = trimmed
            if trimmed > 0 { batch.removeFirst(trimmed) }
            while state.counters.waiting + batch.count > capacity, !state.batches.isEmpty {
                let excess = state.counters.waiting + batch.count - capacity
                if state.batches[0].count <= excess {
                    let oldest = state.batches.removeFirst()
                    dropped += oldest.count
                    state.counters.waiting -= oldest.count
                } else {
                    state.batches[0].removeFirst(excess)
                    dropped += excess
                    state.counters.waiting -= excess
                }
            }
            Self.enqueue(&batch, &state)
            state.counters.delivered += UInt64(trimmed)
            state.counters.dropped += UInt64(dropped)
            wakeups = Self.handOff(&state)
            return HCIEventOffer(accepted: true, dropped: dropped)
        }
        wakeups.perform()
        return offer
    }

    public func deliver(_ batch: [CapturedHCIEvent]) async -> Bool {
        guard !batch.isEmpty else { return !isClosedOrFinished }
        var batch = batch
        while true {
            let outcome: Bool? = await withCheckedContinuation { (continuation: CheckedContinuation<Bool?, Never>) in
                var wakeups = Wakeups()
                let immediate = state.withLock { state -> Bool? in
                    let admitted = admit(&batch, &state, &wakeups)
                    if admitted == nil { state.producers.append(continuation) }
                    return admitted
                }
                wakeups.perform()
                if let immediate { continuation.resume(returning: immediate) }
            }
            if let outcome { return outcome }
        }
    }

    /// `deliver` for a producer on a thread of its own (never a pool thread): blocks that thread while the
    /// mailbox is full. False once the consumer is gone or the sink finished.
    public func deliverWaiting(_ batch: consuming [CapturedHCIEvent]) -> Bool {
        guard !batch.isEmpty else { return !isClosedOrFinished }
        var batch = consume batch
        var waiter: DispatchSemaphore?
        while true {
            var wakeups = Wakeups()
            let outcome = state.withLock { state -> Bool? in
                let admitted = admit(&batch, &state, &wakeups)
                if admitted == nil {
                    let semaphore = waiter ?? DispatchSemaphore(value: 0)
                    waiter = semaphore
                    state.threads.append(semaphore)
                }
                return admitted
            }
            wakeups.perform()
            if let outcome { return outcome }
            waiter?.wait()
        }
    }

    public func finish() {
        var wakeups = Wakeups()
        state.withLock { state in
            state.finished = true
            wakeups = Self.handOff(&state)
            wakeups.producers += state.producers
            state.producers.removeAll()
            wakeups.threads += state.threads
            state.threads.removeAll()
        }
        wakeups.perform()
    }

    /// Queues a control input for the consumer; false once the consumer is gone.
    @discardableResult
    public func post(_ control: Control) -> Bool {
        var wakeups = Wakeups()
        let posted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.controls.count >= controlCapacity {
                state.controls.removeFirst()
                state.counters.droppedControls += 1
            }
            state.controls.append(control)
            wakeups = Self.handOff(&state)
            return true
        }
        wakeups.perform()
        return posted
    }

    /// Wakes the consumer for work it keeps itself (the publisher's inputs when the daemon's loop delivers,
    /// `DeliveryDriver.start(wake:)`): `.poked` when nothing else is waiting; otherwise the next item (a control
    /// or the batches) stands for it, since the consumer looks at its own work after every item. Several pokes
    /// before the consumer's next turn are one; a poke never displaces a control or a batch.
    public func poke() {
        var wakeups = Wakeups()
        state.withLock { state in
            guard !state.closed else { return }
            state.poked = true
            wakeups = Self.handOff(&state)
        }
        wakeups.perform()
    }

    // MARK: The consumer

    /// Buffers kept for the producers at most (`recycle`): the live reading thread takes one per hand-over, and
    /// the consumer gives back the batches of one `.events` item at a time.
    public static var spareLimit: Int { 2 }

    /// Gives the buffers of batches the consumer is done with back to the producers (`spareBatch()`), emptied
    /// with their capacity kept; at most `spareLimit` are kept. A hand-over then allocates no batch buffer (a
    /// fresh buffer of a reading thread's batch capacity is a 4 KiB `malloc`, which makes glibc consolidate its
    /// free lists). Leaves `batches` empty.
    public func recycle(_ batches: inout [[CapturedHCIEvent]]) {
        let kept = min(batches.count, Self.spareLimit)
        // The events' own buffers are released here, outside the lock.
        for index in batches.indices.suffix(kept) { batches[index].removeAll(keepingCapacity: true) }
        state.withLock { state in
            for _ in 0..<kept where state.spares.count < Self.spareLimit {
                state.spares.append(batches.removeLast())
            }
        }
        batches.removeAll()
    }

    public func spareBatch() -> [CapturedHCIEvent]? { state.withLock { $0.spares.popLast() } }

    /// The next control input, or every waiting batch, or `.finished`; waits (suspended) while there is none.
    /// One consumer at a time.
    public func next() async -> Item {
        await withCheckedContinuation { (continuation: CheckedContinuation<Item, Never>) in
            var wakeups = Wakeups()
            state.withLock { state in
                precondition(state.consumer == nil, "EventMailbox has one consumer")
                state.consumer = continuation
                wakeups = Self.handOff(&state)
            }
            wakeups.perform()
        }
    }

    /// The consumer is gone: waiting events are dropped, producers are told (offers and deliveries return
    /// false, posts too). A consumer suspended in `next()` gets `.finished`.
    public func close() {
        var wakeups = Wakeups()
        state.withLock { state in
            state.closed = true
            state.counters.waiting = 0
            state.batches.removeAll()
            state.controls.removeAll()
            if let consumer = state.consumer {
                state.consumer = nil
                wakeups.consumer = (consumer, .finished)
            }
            wakeups.producers = state.producers
            state.producers.removeAll()
            wakeups.threads = state.threads
            state.threads.removeAll()
        }
        wakeups.perform()
    }

    private var isClosedOrFinished: Bool { state.withLock { $0.closed || $0.finished } }

    /// A waiting producer's batch (`deliver`, `deliverWaiting`): enqueued when there is room, or nothing waiting at
    /// all (a batch larger than the capacity still goes in whole): true; false once closed or finished; nil when
    /// full (the caller registers its waiter under the same lock). An admitted batch is moved into the waiting
    /// batches (`batch` is left empty), so the consumer holds the only reference once it has it.
    private func admit(_ batch: inout [CapturedHCIEvent], _ state: inout State, _ wakeups: inout Wakeups) -> Bool? {
        guard !state.closed, !state.finished else { return false }
        guard state.counters.waiting == 0 || state.counters.waiting + batch.count <= capacity else { return nil }
        Self.enqueue(&batch, &state)
        wakeups = Self.handOff(&state)
        return true
    }

    /// Moves `batch` into the waiting batches (it is left empty), so no reference of the producer's is left when
    /// the consumer runs: it may be done with the batch and give its buffer back before the producer returns.
    private static func enqueue(_ batch: inout [CapturedHCIEvent], _ state: inout State) {
        var taken: [CapturedHCIEvent] = []
        swap(&taken, &batch)
        let count = taken.count
        state.batches.append(consume taken)
        state.counters.waiting += count
        state.counters.delivered += UInt64(count)
    }

    /// When the consumer waits and something is there for it: its item (waking waiting producers when the
    /// batches are taken, since there is room again).
    private static func handOff(_ state: inout State) -> Wakeups {
        var wakeups = Wakeups()
        guard let consumer = state.consumer else { return wakeups }
        let item: Item
        if !state.controls.isEmpty {
            item = .control(state.controls.removeFirst())
        } else if !state.batches.isEmpty {
            item = .events(state.batches)
            state.batches.removeAll()
            state.counters.waiting = 0
            wakeups.producers = state.producers
            state.producers.removeAll()
            wakeups.threads = state.threads
            state.threads.removeAll()
        } else if state.finished || state.closed {
            item = .finished
        } else if state.poked {
            item = .poked
        } else {
            return wakeups
        }
        state.poked = false
        state.consumer = nil
        wakeups.consumer = (consumer, item)
        return wakeups
    }
}
