import Dispatch
import Synchronization

/// Runs async work from the synchronous command dispatch: the calling (main) thread waits on a semaphore
/// while the work runs on the concurrency pool.
enum AsyncMain {
    static func block(_ body: @escaping @Sendable () async -> Int32) -> Int32 {
        let result = Mutex<Int32>(ExitCode.software)
        let done = DispatchSemaphore(value: 0)
        Task {
            let code = await body()
            result.withLock { $0 = code }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}
