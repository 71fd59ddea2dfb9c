import BeaconEvents

/// The delivery of one cursor-driven sink (the webhook) as a pure state machine: it takes inputs with the time
/// and returns what to do; the driver (`SinkDriver` in BeaconRuntime) reads the outbox, hands events to the
/// sink, records acknowledgements and sleeps as told. No I/O, no clock.
///
/// The sink reads the outbox from its own cursor (the rows it has not acknowledged, in sequence order), hands
/// over up to `batchSize` events of the kinds it takes at a time, and acknowledges the batch once the sink
/// accepted it, together with the rows of other kinds it passed over. A failed hand-over is offered again,
/// read again from the same cursor, after a backoff that doubles from `retryMin` to `retryMax`: delivery is at
/// least once, in sequence order, and nothing is lost while the receiver is down (the rows wait in the outbox,
/// within its bounds and the sightings' age limit).
public struct SinkCursor: Sendable {
    public struct Settings: Sendable, Equatable {
        public var batchSize: Int
        public var kinds: Set<EventKind>
        public var retryMin: Double
        public var retryMax: Double
        /// Seconds between two looks at the outbox while there is nothing to send.
        public var pollInterval: Double

        public init(
            batchSize: Int, kinds: Set<EventKind>, retryMin: Double, retryMax: Double, pollInterval: Double = 0.5
        ) {
            self.batchSize = max(1, batchSize)
            self.kinds = kinds
            self.retryMin = retryMin
            self.retryMax = max(retryMin, retryMax)
            self.pollInterval = pollInterval
        }

        public init(_ webhook: WebhookSettings) {
            self.init(
                batchSize: webhook.batchSize, kinds: Set(webhook.kinds), retryMin: webhook.retryMin,
                retryMax: webhook.retryMax)
        }
    }

    /// Where the machine is. Exactly one answered action (a read or a hand-over) is outstanding in `reading`
    /// and `delivering`.
    public enum State: Sendable, Equatable {
        /// Nothing to send: look again at the time (or when woken).
        case idle(until: Double)
        case reading
        /// Handed over these rows (the sent ones and the passed-over ones before them), waiting for the outcome.
        case delivering(rows: [UInt64], sent: Int)
        /// The last hand-over failed (`attempt` times in a row): read again at the time.
        case backingOff(until: Double, attempt: Int)
        case stopped
    }

    public enum Input: Sendable, Equatable {
        /// Start, or new events were stored: look now unless backing off.
        case wake
        /// Result of `.read`.
        case rows([EventEnvelope])
        /// Result of `.deliver`.
        case delivered(SinkOutcome)
        /// An outbox operation failed (the database is unusable): treated as a failed hand-over.
        case outboxFailed(String)
        /// The time passed: due reads happen.
        case tick
        case stop
    }

    public enum Action: Sendable, Equatable {
        /// Read up to `limit` rows the sink has not acknowledged, after `after`. Answer: `.rows` or `.outboxFailed`.
        case read(after: UInt64?, limit: Int)
        /// Hand the messages to the sink. Answer: `.delivered`.
        case deliver([SinkMessage])
        /// Record the sink's acknowledgement of the rows (answer only on failure: `.outboxFailed`).
        case acknowledge([UInt64])
        case notify(SinkNotice)
    }

    public let settings: Settings
    public private(set) var state: State = .idle(until: -Double.infinity)
    public private(set) var counters = SinkCounters()
    /// The last row read and settled (acknowledged or passed over) in this process; rows at or below it are
    /// not read again. Nil at start: the outbox's own record (rows this sink acknowledged are never returned)
    /// is the persisted cursor.
    public private(set) var cursor: UInt64?
    private var failures = 0

    public init(settings: Settings) { self.settings = settings }

    /// Rows read per look: room to pass over other kinds and still fill a batch.
    var readLimit: Int { min(1000, max(settings.batchSize * 5, 100)) }

    /// When the driver should give the machine a `.tick` (nil: only on an input).
    public var deadline: Double? {
        switch state {
        case let .idle(until): until
        case let .backingOff(until, _): until
        case .reading, .delivering, .stopped: nil
        }
    }

    public mutating func handle(_ input: Input, now: Double) -> [Action] {
        var actions: [Action] = []
        switch (input, state) {
        case (_, .stopped):
            break
        case (.stop, _):
            state = .stopped
        case (.wake, .idle):
            read(into: &actions)
        case (.tick, .idle(let until)) where now >= until:
            read(into: &actions)
        case (.tick, .backingOff(let until, _)) where now >= until:
            read(into: &actions)
        case let (.rows(rows), .reading):
            received(rows, now: now, into: &actions)
        case let (.delivered(outcome), .delivering(rows, sent)):
            delivered(outcome, rows: rows, sent: sent, now: now, into: &actions)
        case let (.outboxFailed(message), _):
            fail("outbox: \(message)", retryAfter: nil, now: now, into: &actions)
        default:
            break
        }
        return actions
    }

    private mutating func read(into actions: inout [Action]) {
        state = .reading
        actions.append(.read(after: cursor, limit: readLimit))
    }

    private mutating func received(_ rows: [EventEnvelope], now: Double, into actions: inout [Action]) {
        var taken: [UInt64] = []
        var messages: [SinkMessage] = []
        for row in rows {
            if settings.kinds.contains(row.kind) {
                guard messages.count < settings.batchSize else { break }
                messages.append(SinkMessage(row))
            }
            taken.append(row.sequence)
        }
        if messages.isEmpty {
            guard let last = taken.last else {
                state = .idle(until: now + settings.pollInterval)
                return
            }
            // Only other kinds: passed over at once.
            counters.passedOver += taken.count
            cursor = last
            actions.append(.acknowledge(taken))
            if rows.count >= readLimit {
                read(into: &actions)
            } else {
                state = .idle(until: now + settings.pollInterval)
            }
            return
        }
        // A batch ends at its last sent row: the passed-over rows after it wait for the next batch.
        if let lastSent = messages.last?.sequence, let end = taken.firstIndex(of: lastSent) {
            taken = Array(taken[...end])
        }
        counters.attempts += 1
        state = .delivering(rows: taken, sent: messages.count)
        actions.append(.deliver(messages))
    }

    private mutating func delivered(
        _ outcome: SinkOutcome, rows: [UInt64], sent: Int, now: Double, into actions: inout [Action]
    ) {
        switch outcome {
        case .acknowledged:
            counters.delivered += sent
            counters.passedOver += rows.count - sent
        case let .refused(reason):
            counters.refused += sent
            counters.passedOver += rows.count - sent
            counters.lastError = reason
            actions.append(.notify(.refused(count: sent, firstSequence: rows.first ?? 0, reason: reason)))
        case let .failed(reason, retryAfter):
            fail(reason, retryAfter: retryAfter, now: now, into: &actions)
            return
        }
        if failures > 0 { actions.append(.notify(.recovered(afterFailures: failures))) }
        failures = 0
        cursor = rows.last ?? cursor
        actions.append(.acknowledge(rows))
        read(into: &actions)
    }

    private mutating func fail(_ reason: String, retryAfter: Double?, now: Double, into actions: inout [Action]) {
        failures += 1
        counters.failures += 1
        counters.lastError = reason
        var delay = settings.retryMin
        for _ in 1..<min(failures, 32) { delay = min(settings.retryMax, delay * 2) }
        if let retryAfter, retryAfter > delay { delay = min(settings.retryMax, retryAfter) }
        state = .backingOff(until: now + delay, attempt: failures)
        actions.append(.notify(.failed(reason: reason, attempt: failures, retryIn: delay)))
    }
}

/// What the sink's machine reports (the driver logs it).
public enum SinkNotice: Sendable, Equatable {
    /// A hand-over failed; the same events are offered again in `retryIn` seconds.
    case failed(reason: String, attempt: Int, retryIn: Double)
    /// A hand-over succeeded after failures.
    case recovered(afterFailures: Int)
    /// The sink refused events for good: passed over.
    case refused(count: Int, firstSequence: UInt64, reason: String)
}

/// A sink's figures (the webhook's in the `stopped` line and telemetry).
public struct SinkCounters: Sendable, Equatable {
    /// Events the sink accepted.
    public var delivered = 0
    /// Events it refused for good (passed over).
    public var refused = 0
    /// Rows of kinds the sink does not take, acknowledged without a hand-over.
    public var passedOver = 0
    /// Hand-overs (requests) and failed ones.
    public var attempts = 0
    public var failures = 0
    public var lastError: String?

    public init() {}
}
