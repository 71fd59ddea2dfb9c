#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread that runs one closure, for blocking work that must stay off the Swift concurrency pool.
/// The corresponding C call is `pthread_create`; the thread is detached.
public enum DedicatedThread {
    private final class Body {
        let name: String?
        let run: () -> Void
        init(_ name: String?, _ run: @escaping () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Starts `body` on a new thread, named `name` (at most 15 bytes are kept; what `top -H` and
    /// /proc/PID/task/TID/comm show) when given. Returns the errno when the thread cannot be created.
    /// The name is written to /proc/thread-self/comm (`pthread_setname_np` is not visible to Swift here).
    public static func start(name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Body(name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
                if let name = body.name { DedicatedThread.setName(name) }
                body.run()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return result
        }
        pthread_detach(thread)
        return 0
    }

    /// Names the calling thread (best effort: nothing happens where /proc is not mounted).
    static func setName(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The thread could not be created (`pthread_create`'s error number).
    public struct StartFailure: Error, Sendable, Equatable {
        public let code: Int32
    }

    /// Runs blocking `body` (a database open, a synchronous system call) on a thread of its own and resumes the
    /// caller with its result: no thread of the cooperative pool waits meanwhile. Throws `StartFailure` when the
    /// thread cannot be created (the caller decides; nothing traps).
    public static func run<T: Sendable>(name: String? = nil, _ body: @escaping @Sendable () -> T)
        async throws(StartFailure) -> T
    {
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<T, StartFailure>, Never>) in
            let code = start(name: name) { continuation.resume(returning: .success(body())) }
            if code != 0 { continuation.resume(returning: .failure(StartFailure(code: code))) }
        }
        return try outcome.get()
    }
}
