import Synchronization

/// A service made of one async body that runs until it returns or is stopped; `stop()` cancels it (a periodic
/// tick, a watchdog, the forwarding of a subscription's messages). The body runs on a child task of `run()`,
/// so nothing is left running once `run()` has returned.
public final class TaskService: Service {
    public let name: String
    private let body: @Sendable () async -> Void
    private let stopped = Latch<Void>()

    /// `body` should return when its task is cancelled (`Task.sleep` throws, an `AsyncStream` ends).
    public init(_ name: String, _ body: @escaping @Sendable () async -> Void) {
        self.name = name
        self.body = body
    }

    public func run() async {
        await withTaskGroup(of: Void.self) { [body, stopped] group in
            group.addTask { await body() }
            group.addTask { _ = await stopped.wait() }
            // The first to end (the body by itself, or a stop) ends the other.
            _ = await group.next()
            group.cancelAll()
        }
    }

    public func stop() async { stopped.open() }
}

/// A service with nothing to run, only something to do when stopped (a source that runs on its own thread,
/// a server with its own poll loop): `run()` waits until `stop()`, which performs `onStop` first.
public final class StopOnlyService: Service {
    public let name: String
    private let onStop: @Sendable () async -> Void
    private let stopping = Atomic<Bool>(false)
    private let stopped = Latch<Void>()

    public init(_ name: String, onStop: @escaping @Sendable () async -> Void) {
        self.name = name
        self.onStop = onStop
    }

    public func run() async { _ = await stopped.wait() }

    /// Performs `onStop` (on the first call only), then ends `run()`.
    public func stop() async {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        await onStop()
        stopped.open()
    }
}
