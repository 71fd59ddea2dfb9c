import Synchronization

/// A value set once, that any number of tasks wait for: the end of a service's `run()`, a stop request, a
/// start-up gate. Waiting is a suspended task (no thread blocks); a waiter whose task is cancelled returns nil
/// at once. The first `open` wins; later ones change nothing.
public final class Latch<Value: Sendable>: Sendable {
    private struct State: ~Copyable {
        var value: Value?
        var nextToken = 0
        var waiters: [(token: Int, continuation: CheckedContinuation<Value?, Never>)] = []
        /// Tokens whose task was cancelled before their continuation was stored.
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Sets the value and resumes every waiter; false (and nothing changes) when it was already set.
    @discardableResult
    public func open(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, nil while not set.
    public var value: Value? { state.withLock { $0.value } }

    /// Waits until the value is set and returns it; nil when the waiting task is cancelled first.
    public func wait() async -> Value? {
        let token = state.withLock { state -> Int in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let now = state.withLock { state -> Value?? in
                    let cancelled = state.cancelled.remove(token) != nil
                    if let value = state.value { return .some(value) }
                    if cancelled { return .some(nil) }
                    state.waiters.append((token, continuation))
                    return .none
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
                if let index = state.waiters.firstIndex(where: { $0.token == token }) {
                    return state.waiters.remove(at: index).continuation
                }
                if state.value == nil { state.cancelled.insert(token) }
                return nil
            }
            waiter?.resume(returning: nil)
        }
    }
}

extension Latch where Value == Void {
    /// Sets the latch (`open(())`).
    @discardableResult
    public func open() -> Bool { open(()) }

    /// True once set.
    public var isOpen: Bool { value != nil }
}
