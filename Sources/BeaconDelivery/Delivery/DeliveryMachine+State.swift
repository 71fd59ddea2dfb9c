import BeaconEvents

/// The delivery machine's state (docs/architecture.md, "Delivery"), in the manner of mqtt-nio's state machines:
/// each state carries only the data valid in it, so a combination that cannot happen (live while
/// disconnected, a drain cursor while stopping) cannot be written down either.
extension DeliveryMachine {
    enum State: Sendable {
        /// No connection: new events go to the outbox.
        case disconnected
        /// Connected, reading the outbox in sequence order; new events queue behind it in the outbox.
        case draining(Drain)
        /// Connected, outbox drained: new events go straight to the transport while the window has room.
        case live(Live)
        /// Waiting for acknowledgements until `deadline` (no new sends).
        case stopping(Stopping)
        /// Delivery is over; `connected` only tells whether the transport still is.
        case finished(connected: Bool)
    }

    struct Drain: Sendable {
        /// Outbox rows read but not sent yet (reversed: next at the end).
        package var batch: [EventEnvelope] = []
        /// The last sequence taken from the outbox (nil: from the start).
        package var cursor: UInt64?
        /// A send could not be handed over ("not now"): no new send until the next outside input.
        var sendBlocked = false
    }

    struct Live: Sendable {
        /// Live events accepted while live, sent one at a time from `head`.
        package var queue: [EventEnvelope] = []
        package var head = 0
        /// The drain's cursor, kept for the next drain (a full window or a transient refusal).
        package var cursor: UInt64?
        var sendBlocked = false

        /// Accepted, not sent yet.
        package var unsent: ArraySlice<EventEnvelope> { queue[head...] }
    }

    struct Stopping: Sendable {
        package var deadline: Double
        package var connected: Bool
        /// Live events accepted before the stop and never sent: stored when the stop finishes.
        package var unsent: [EventEnvelope]
    }

    /// The public view of the state.
    public var mode: Mode {
        switch state {
        case .disconnected: .disconnected
        case .draining: .draining
        case .live: .live
        case .stopping: .stopping
        case .finished: .finished
        }
    }

    /// The transport's connection is up (in any state).
    package var connected: Bool {
        switch state {
        case .disconnected: false
        case .draining, .live: true
        case let .stopping(stopping): stopping.connected
        case let .finished(connected): connected
        }
    }

    package var finished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Connected and delivering (neither stopping nor finished).
    var delivering: Bool {
        switch state {
        case .draining, .live: true
        case .disconnected, .stopping, .finished: false
        }
    }

    /// A send could not be handed over ("not now"): no new send until the next outside input.
    var sendsBlocked: Bool {
        switch state {
        case let .draining(drain): drain.sendBlocked
        case let .live(live): live.sendBlocked
        case .disconnected, .stopping, .finished: false
        }
    }

    /// Probing for a refused event (`probeAcknowledgements` counts the acknowledgements since it began).
    var probing: Bool { probeAcknowledgements != nil }

    /// The next outside input may send again.
    mutating func unblockSends() {
        modifyDrain { $0.sendBlocked = false }
        modifyLive { $0.sendBlocked = false }
    }

    /// Mutates the live state in place: the payload is taken out of `state` first, so its queue has one owner
    /// and grows or empties without being copied. Nil when not live.
    @discardableResult
    mutating func modifyLive<Result>(_ body: (inout Live) -> Result) -> Result? {
        guard case .live(var live) = state else { return nil }
        state = .disconnected
        defer { state = .live(live) }
        return body(&live)
    }

    /// Mutates the drain state in place (as `modifyLive`). Nil when not draining.
    @discardableResult
    mutating func modifyDrain<Result>(_ body: (inout Drain) -> Result) -> Result? {
        guard case .draining(var drain) = state else { return nil }
        state = .disconnected
        defer { state = .draining(drain) }
        return body(&drain)
    }

    /// Live events accepted and not sent yet, in the states that hold any (live, stopping).
    var unsentLiveEvents: [EventEnvelope] {
        switch state {
        case let .live(live): Array(live.unsent)
        case let .stopping(stopping): stopping.unsent
        case .disconnected, .draining, .finished: []
        }
    }
}
