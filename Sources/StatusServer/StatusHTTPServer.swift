import BeaconRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP server of the status page and `/metrics` (docs/status-page.md; docs/architecture.md, "The status
/// page's HTTP server").
///
/// One dedicated thread runs a `poll` loop over the listening socket, a wake-up pipe and every connection (all
/// non-blocking). With nobody connected it sleeps in `poll` without a timeout (no CPU at idle). One request per
/// connection (`Connection: close`), so every connection lives at most `requestTimeout` seconds from its accept
/// to its complete request, whatever the client sends meanwhile: a client that sends a byte a second
/// (slowloris) is answered 408 and closed at that deadline, and one that does not read its response is closed
/// `requestTimeout` seconds later. At most `maxConnections` are open; one more is answered 503 and closed.
/// Requests are read by `HTTPRequestParser` within its limits; `handler` runs on this thread and must not block
/// (it reads snapshots and posts to mailboxes).
///
/// `@unchecked Sendable`: the descriptors and connections are touched by the server thread only (and by
/// `start` before the thread exists); `running` and `finished` are atomic; `counters` are atomics.
public final class StatusHTTPServer: @unchecked Sendable {
    public struct Configuration: Sendable, Equatable {
        public var address: String
        public var port: Int
        public var maxConnections: Int
        /// Seconds from a connection's accept to its complete request (and again to write the response).
        public var requestTimeout: Double
        public var limits: HTTPRequestParser.Limits

        public init(
            address: String, port: Int, maxConnections: Int = 16, requestTimeout: Double = 10,
            limits: HTTPRequestParser.Limits = .init()
        ) {
            self.address = address
            self.port = port
            self.maxConnections = maxConnections
            self.requestTimeout = requestTimeout
            self.limits = limits
        }
    }

    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    final class Connection {
        let fd: Int32
        var deadline: Double
        var parser: HTTPRequestParser
        var outgoing: [UInt8] = []
        var sent = 0
        /// Reading the request, writing the response, or lingering: the response is sent and the write side shut,
        /// what the client still sends is read and dropped (so closing does not reset the connection before the
        /// client has read the response) until it closes or the deadline.
        enum Phase { case reading, writing, lingering, closed }
        var phase = Phase.reading

        init(fd: Int32, deadline: Double, limits: HTTPRequestParser.Limits) {
            self.fd = fd
            self.deadline = deadline
            self.parser = HTTPRequestParser(limits: limits)
        }
    }

    public let configuration: Configuration
    public let counters = StatusHTTPCounters()
    let handler: Handler
    let running = Atomic<Bool>(false)
    let finished = Atomic<Bool>(false)
    var listener: Int32 = -1
    var wake = WakePipe.closed
    var connections: [Connection] = []
    /// The port actually bound (configuration port 0 picks a free one).
    public private(set) var port = 0

    public init(configuration: Configuration, handler: @escaping Handler) {
        self.configuration = configuration
        self.handler = handler
    }

    /// A failure to listen or to start the thread, with the call and its errno.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Binds, listens and starts the server thread.
    public func start() throws(StartFailure) {
        do {
            let bound = try HTTPSocket.listen(address: configuration.address, port: configuration.port)
            listener = bound.fd
            port = bound.port
        } catch {
            throw StartFailure(description: error.description)
        }
        wake = WakePipe.make()
        guard wake.isOpen else {
            close(listener)
            throw StartFailure(description: "pipe2: \(String(cString: strerror(errno)))")
        }
        running.store(true, ordering: .releasing)
        let code = DedicatedThread.start(name: "bb-http") { [self] in
            loop()
            finished.store(true, ordering: .releasing)
        }
        guard code == 0 else {
            running.store(false, ordering: .releasing)
            close(listener)
            wake.close()
            throw StartFailure(description: "pthread_create: \(String(cString: strerror(code)))")
        }
    }

    /// Stops the thread (it closes every connection and the listener) and waits for it, at most about a second.
    public func stop() async {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.wake()
        for _ in 0..<200 where !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// Whether `address` is a loopback address (127.0.0.0/8, ::1): no read token is needed there.
    public static func isLoopback(_ address: String) -> Bool { HTTPSocket.isLoopback(address) }
}

/// The server's figures, readable from any thread (`/metrics`, tests).
public final class StatusHTTPCounters: Sendable {
    let requests = Atomic<UInt64>(0)
    let refused = Atomic<UInt64>(0)
    let timedOut = Atomic<UInt64>(0)
    let overloaded = Atomic<UInt64>(0)
    let open = Atomic<Int>(0)

    init() {}

    public struct Snapshot: Sendable, Equatable {
        /// Requests read whole and answered by a route (any status).
        public var requests: UInt64
        /// Requests refused while being read (malformed, oversized: 400, 413, 414, 431, 501, 505).
        public var refused: UInt64
        /// Connections cut at the request deadline (408; slowloris).
        public var timedOut: UInt64
        /// Connections refused because `max_connections` were open (503).
        public var overloaded: UInt64
        /// Connections open now.
        public var open: Int

        public init(
            requests: UInt64 = 0, refused: UInt64 = 0, timedOut: UInt64 = 0, overloaded: UInt64 = 0, open: Int = 0
        ) {
            self.requests = requests
            self.refused = refused
            self.timedOut = timedOut
            self.overloaded = overloaded
            self.open = open
        }
    }

    public var snapshot: Snapshot {
        Snapshot(
            requests: requests.load(ordering: .relaxed), refused: refused.load(ordering: .relaxed),
            timedOut: timedOut.load(ordering: .relaxed), overloaded: overloaded.load(ordering: .relaxed),
            open: open.load(ordering: .relaxed))
    }
}
