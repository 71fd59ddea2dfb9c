import BeaconModel
import BeaconRuntime
import DeviceProtocols
import Synchronization

/// Runs GATT commands off the daemon's loop: at most `workers` threads at a time (one per connection slot),
/// each taking commands from a bounded queue until it is empty, then ending. `submit` never blocks: when the
/// queue holds `maxPending` commands it refuses at once (`busy`), so a flood of commands costs memory for at most
/// `maxPending` of them and the scan and delivery never wait for a connection.
public final class GATTCommandWorkers: Sendable {
    public typealias Completion = @Sendable (Result<[(String, JSONValue)], GATTCommandError>) -> Void
    struct Job: Sendable {
        var command: GATTCommandRequest
        var completion: Completion
    }
    struct State {
        var queue: [Job] = []
        var running = 0
        var stopped = false
    }

    public let workers: Int
    public let maxPending: Int
    private let execute: @Sendable (GATTCommandRequest) -> Result<[(String, JSONValue)], GATTCommandError>
    private let state = Mutex(State())

    public init(
        workers: Int, maxPending: Int,
        execute: @escaping @Sendable (GATTCommandRequest) -> Result<[(String, JSONValue)], GATTCommandError>
    ) {
        self.workers = max(1, workers)
        self.maxPending = max(0, maxPending)
        self.execute = execute
    }

    /// Queues `command`; `completion` is called exactly once, on a worker thread (or at once on this one when the
    /// command is refused: queue full, stopped, no thread).
    public func submit(_ command: GATTCommandRequest, completion: @escaping Completion) {
        enum Decision {
            case refuse(GATTCommandError)
            case queued, startWorker
        }
        let decision: Decision = state.withLock { state in
            if state.stopped {
                return .refuse(GATTCommandError(kind: "stopping", step: "queue", message: "the gateway is stopping"))
            }
            if state.running < workers {
                state.running += 1
                state.queue.append(Job(command: command, completion: completion))
                return .startWorker
            }
            guard state.queue.count < maxPending else {
                return .refuse(
                    GATTCommandError(
                        kind: "busy", step: "queue",
                        message: "\(workers) commands are running and \(maxPending) waiting; try again later"))
            }
            state.queue.append(Job(command: command, completion: completion))
            return .queued
        }
        switch decision {
        case .refuse(let error): completion(.failure(error))
        case .queued: break
        case .startWorker:
            let code = DedicatedThread.start(name: "bb-gatt") { [self] in work() }
            if code != 0 {
                let jobs = state.withLock { state in
                    state.running -= 1
                    defer { if state.running == 0 { state.queue.removeAll() } }
                    return state.running == 0 ? state.queue : []
                }
                let error = GATTCommandError(
                    kind: "system", step: "thread", message: "cannot start a worker thread (errno \(code))")
                for job in jobs { job.completion(.failure(error)) }
            }
        }
    }

    /// Commands waiting and running now.
    public var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.queue.count) } }

    /// Refuses new commands and answers the waiting ones with `stopping`; running ones end by their timeouts.
    public func stop() {
        let jobs = state.withLock { state in
            state.stopped = true
            defer { state.queue.removeAll() }
            return state.queue
        }
        let error = GATTCommandError(kind: "stopping", step: "queue", message: "the gateway is stopping")
        for job in jobs { job.completion(.failure(error)) }
    }

    /// A worker: takes the next job until none is left.
    private func work() {
        while true {
            let next: Job? = state.withLock { state in
                guard !state.queue.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return state.queue.removeFirst()
            }
            guard let job = next else { return }
            job.completion(execute(job.command))
        }
    }
}
