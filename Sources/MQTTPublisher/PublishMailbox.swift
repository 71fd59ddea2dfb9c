import BeaconEvents
import Synchronization

/// The publisher's bounded input (docs/mqtt.md, "Bounds"): envelopes wait here until the delivery loop takes
/// them all at once (one outbox transaction for whatever spills). `admit` suspends while `limit` envelopes are
/// waiting, which pauses the daemon loop and, through it, the source: memory stays bounded however fast the
/// pipeline runs. Acknowledgements do not queue behind envelopes: they have their own inbox.
final class PublishMailbox: Sendable {
    struct State {
        var envelopes: [EventEnvelope] = []
        var waiters: [CheckedContinuation<Void, Never>] = []
        var closed = false
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    enum PutResult { case announce, queued, closed }

    /// Adds envelopes whatever the fill (never waits). `.announce`: the mailbox was empty, tell the loop.
    func put(_ envelopes: [EventEnvelope]) -> PutResult {
        state.withLock { state in
            guard !state.closed else { return .closed }
            let wasEmpty = state.envelopes.isEmpty
            state.envelopes += envelopes
            return wasEmpty ? .announce : .queued
        }
    }

    /// Adds envelopes once fewer than `limit` are waiting (suspends until then).
    func admit(_ envelopes: [EventEnvelope]) async -> PutResult {
        while true {
            let outcome = state.withLock { state -> PutResult? in
                if state.closed { return .closed }
                guard state.envelopes.count < limit else { return nil }
                let wasEmpty = state.envelopes.isEmpty
                state.envelopes += envelopes
                return wasEmpty ? .announce : .queued
            }
            if let outcome { return outcome }
            // Full: wait for `takeAll` (or `close`), then try again.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.closed || state.envelopes.count < limit { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Everything waiting, in order; wakes the admitters.
    func takeAll() -> [EventEnvelope] {
        let (envelopes, waiters) = state.withLock { state -> ([EventEnvelope], [CheckedContinuation<Void, Never>]) in
            defer {
                state.envelopes = []
                state.waiters = []
            }
            return (state.envelopes, state.waiters)
        }
        for waiter in waiters { waiter.resume() }
        return envelopes
    }

    /// No more envelopes are taken: returns what is still waiting and wakes every admitter.
    func close() -> [EventEnvelope] {
        state.withLock { $0.closed = true }
        return takeAll()
    }

    var count: Int { state.withLock { $0.envelopes.count } }
}
