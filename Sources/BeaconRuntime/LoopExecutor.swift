import BeaconFormats
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The executor the daemon's loop runs on (`withTaskExecutorPreference`): a thread of its own (`bb-loop`) that
/// runs the loop's jobs one at a time, and that a source's thread can lend itself to (`hosting`), so a batch the
/// reading thread hands over is processed on that thread right away instead of waking another one.
///
/// Why: the loop is woken once per batch window, and on a virtual machine a wake-up of a sleeping thread costs
/// about 28 µs of CPU (docs/daemon-bench.md, session 30), as much as the work on ten reports. A batch used to
/// wake two threads after the reading thread (a pool thread for the loop, the network thread for the write);
/// with `MQTTClient.flush` writing from the loop's thread and the loop running on the reading thread, it wakes
/// none.
///
/// - `enqueue` from any thread appends the job; unless the enqueuing thread will run the queue itself (it is
///   in `hosting`, or running this executor's jobs), it wakes the executor's thread (at most one wake-up
///   waiting at a time).
/// - Jobs run one at a time under `serving`, in the order they came, on whichever thread holds it: the
///   executor's thread after a wake-up, or a hosting thread right after its `body`. Neither waits for the
///   other longer than a job takes; a job never blocks (the loop suspends instead).
/// - `shutdown()` ends the thread once the queue is empty. A job enqueued after that starts a new thread
///   (nothing is left behind); the daemon shuts down only after its loop task has left the preference.
/// - A host's `endHosting()` waits for `serving` while the executor's thread runs a job (it then finds the
///   queue emptied by that thread); a job never waits for a host, so nothing can wait in a circle.
public final class LoopExecutor: TaskExecutor, @unchecked Sendable {
    struct Queue {
        var jobs: [UnownedJob] = []
        var head = 0
        var threadRunning = false
        var shutDown = false

        mutating func popFirst() -> UnownedJob? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            return job
        }
    }

    private let queue = Mutex(Queue())
    /// Held while jobs run (`runQueued`): one at a time, whichever thread runs them.
    private let serving = Mutex(())
    /// The executor's thread sleeps on this; `wakeRequested` keeps at most one signal outstanding.
    private let semaphore = DispatchSemaphore(value: 0)
    private let wakeRequested = Atomic<Bool>(false)
    /// The thread in `hosting` (0: none) and the thread running jobs (0: none): their enqueues wake nobody.
    private let hostThread = Atomic<UInt>(0)
    private let servingThread = Atomic<UInt>(0)
    private let name: String

    /// Starts the executor's thread; nil when it cannot be created (the caller runs its loop without it).
    public static func start(name: String = "bb-loop") -> LoopExecutor? {
        let executor = LoopExecutor(name: name)
        executor.queue.withLock { $0.threadRunning = true }
        guard executor.startThread() else { return nil }
        return executor
    }

    private init(name: String) { self.name = name }

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let startThread = queue.withLock { queue -> Bool in
            queue.jobs.append(job)
            guard !queue.threadRunning else { return false }
            queue.threadRunning = true
            return true
        }
        if startThread && !self.startThread() {
            // Only after a shutdown, and only if no thread can be made: run it here rather than never.
            runQueued()
            return
        }
        let current = Self.currentThread
        if current == hostThread.load(ordering: .acquiring) || current == servingThread.load(ordering: .acquiring) {
            return
        }
        if !wakeRequested.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// The calling thread is about to hand something over that resumes the loop (`HostedEventSink`): what it
    /// enqueues wakes nobody, since `endHosting()` runs it on this thread.
    public func beginHosting() {
        hostThread.store(Self.currentThread, ordering: .releasing)
    }

    /// Runs every waiting job on the calling thread (the loop's work on the batch just handed over).
    public func endHosting() {
        hostThread.store(0, ordering: .releasing)
        runQueued()
    }

    /// Ends the executor's thread once no job is waiting.
    public func shutdown() {
        queue.withLock { $0.shutDown = true }
        if !wakeRequested.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    private func runQueued() {
        serving.withLock { _ in
            servingThread.store(Self.currentThread, ordering: .releasing)
            while let job = queue.withLock({ $0.popFirst() }) {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
            servingThread.store(0, ordering: .releasing)
        }
    }

    private func startThread() -> Bool {
        let started = DedicatedThread.start(name: name) { [self] in
            while true {
                semaphore.wait()
                wakeRequested.store(false, ordering: .releasing)
                runQueued()
                let exit = queue.withLock { queue -> Bool in
                    guard queue.shutDown, queue.head >= queue.jobs.count else { return false }
                    queue.threadRunning = false
                    return true
                }
                if exit { return }
            }
        }
        if started != 0 { queue.withLock { $0.threadRunning = false } }
        return started == 0
    }
}

/// A sink in front of the loop's mailbox for a source on a thread of its own (the HCI reading thread): a batch
/// handed over is processed by the loop on that thread right away (`LoopExecutor.beginHosting`), instead of
/// waking the loop's thread. Everything else is the mailbox's.
public final class HostedEventSink: HCIEventSink {
    let mailbox: any HCIEventSink
    let executor: LoopExecutor

    public init(mailbox: any HCIEventSink, executor: LoopExecutor) {
        self.mailbox = mailbox
        self.executor = executor
    }

    public func offer(_ batch: consuming [CapturedHCIEvent]) -> HCIEventOffer {
        executor.beginHosting()
        let result = mailbox.offer(consume batch)
        executor.endHosting()
        return result
    }

    public func deliver(_ batch: [CapturedHCIEvent]) async -> Bool { await mailbox.deliver(batch) }

    public func deliverWaiting(_ batch: consuming [CapturedHCIEvent]) -> Bool {
        mailbox.deliverWaiting(consume batch)
    }

    public func finish() {
        executor.beginHosting()
        mailbox.finish()
        executor.endHosting()
    }

    public func spareBatch() -> [CapturedHCIEvent]? { mailbox.spareBatch() }
}
