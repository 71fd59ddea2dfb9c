#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread for the proxy's poll loop, off the Swift concurrency pool. The corresponding C call is
/// `pthread_create`; the thread is detached.
enum ServerThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body`; returns 0 or the errno of `pthread_create`.
    static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
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
