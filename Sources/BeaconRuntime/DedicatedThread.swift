#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread that runs one closure, for blocking work that must stay off the Swift concurrency pool.
/// The corresponding C call is `pthread_create`; the thread is detached.
public enum DedicatedThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread. Returns the errno when the thread cannot be created.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
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
}
