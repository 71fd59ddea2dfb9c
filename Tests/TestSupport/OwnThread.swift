import BeaconRuntime
import Foundation

#if canImport(Glibc)
import Glibc
#endif

#if canImport(Testing)
import Testing
#endif

/// A task executor with one thread of its own (`DedicatedThread`), for the test traits below.
///
/// Why: Swift's cooperative pool has as many threads as the machine has cores (two here). A test whose body computes
/// for seconds (a simulation over hours of scenario time in a debug build) holds one of them for that long; two such
/// tests hold the whole pool, and every other test in the process stops: the in-process publishers under test, and the
/// waits of the integration tests, whose wall-clock deadlines then expire while nothing could run (a clean clone's
/// suite under `stress-ng --cpu 2` failed 14 tests with "mosquitto did not start" after such a stall of about 60 s;
/// gdb showed both pool threads in RoomSimulationTests and RegionLatency). A test marked `.ownThread` runs its body
/// here instead, and the operating system shares the cores between it and the pool.
///
/// The thread runs at nice 10 (`backgroundNice`): every case of every marked suite gets a thread, so at the start of
/// a run about fifteen of them compute at once, and at equal priority the two pool threads got two seventeenths of
/// the cores (less under `stress-ng`): a clean clone's suite under `stress-ng --cpu 2` failed
/// `DescriptorWriterTests` in session 10 because its producer task and its 30 s wait on the pool barely ran (gdb: the
/// pool threads in the last CPU-bound tests left on it, fifteen `bb-test-cpu` threads beside them). At nice 10 each
/// weighs about a tenth of a pool thread, so the tests that wait on brokers, pipes and child processes keep their
/// share and the simulations use what is left.
///
/// Invariant for `@unchecked Sendable`: `jobs` and `finished` are only touched under `condition`.
public final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    /// Starts the thread; throws when it cannot be created (the error number of `pthread_create`).
    public init(name: String) throws {
        let code = DedicatedThread.start(name: name) { [self] in serve() }
        guard code == 0 else { throw TestFailure("cannot start the test thread \(name): error \(code)") }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Ends the thread once the jobs enqueued so far have run.
    public func shutdown() {
        condition.withLock {
            finished = true
            condition.signal()
        }
    }

    /// The nice value of the executor's thread (Linux: per thread).
    public static let backgroundNice: Int32 = 10

    private func serve() {
        #if canImport(Glibc)
        // Linux keeps the nice value per thread; `who` 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.backgroundNice)
        #endif
        while true {
            let next: UnownedJob? = condition.withLock {
                while jobs.isEmpty && !finished { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let next else { return }
            next.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

// The trait needs swift-testing, which the toolchain ships for the host build only: a release build with
// `--static-swift-stdlib` (`make release`, `make bench`, which link TestSupport's helpers into the bench) cannot
// import it. Test targets always can.
#if canImport(Testing)
/// Runs each test (each case of a parameterized test) of what it marks on a thread of its own instead of the
/// cooperative pool (see `OwnThreadExecutor`). For tests whose body computes for a long time without suspending;
/// tests that wait on brokers or child processes belong on the pool.
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }  // the suite itself: its tests get their own
        let executor = try OwnThreadExecutor(name: "bb-test-cpu")
        defer { executor.shutdown() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test runs on a thread of its own, off the cooperative pool (CPU-bound tests: simulations).
    public static var ownThread: Self { Self() }
}
#endif
