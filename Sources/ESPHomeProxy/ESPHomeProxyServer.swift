import BeaconFormats
import BeaconRuntime
import DeviceProtocols
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The ESPHome native API server of the Bluetooth proxy (docs/home-assistant.md, "ESPHome Bluetooth proxy").
///
/// One dedicated thread runs a `poll` loop over the listening socket, a wake-up pipe and every client (all
/// non-blocking). The daemon hands over HCI events with `submit` (a short lock, never a wait); every
/// `batchInterval` the thread parses them into raw advertisements and queues one batch per subscribed
/// client. A client whose unsent bytes exceed `clientQueueBytes` misses that batch (counted), so a slow or
/// stuck client never delays the scanner, the MQTT path or the other clients. Protocol state per client is
/// `ESPHomeSession` (pure); this type only moves bytes.
///
/// With active connections each device connection runs on its own thread (`ESPHomeDeviceLink`) and reports
/// through `inbox` and the wake-up pipe; the loop never waits for a device.
///
/// `@unchecked Sendable`: the descriptors and clients are touched by the server thread only; `pending` and
/// `inbox` are behind mutexes; `running` is atomic.
public final class ESPHomeProxyServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var bind: String
        public var port: Int
        public var session: ESPHomeSession.Configuration
        public var allow: [NetworkAddressRange]
        public var maxClients: Int
        public var clientQueueBytes: Int
        public var batchInterval: Double
        /// A connection that has not finished Hello (and Connect, with a password) by then is closed.
        public var handshakeTimeout: Double = 30
        /// HCI events kept between two batches; more are dropped (counted as `eventsDropped`).
        public var pendingLimit = 65_536
        /// Active connections; nil for a passive proxy (`session.identity.activeConnections` must agree).
        public var activeConnections: ActiveConnections?

        public init(
            bind: String, port: Int, session: ESPHomeSession.Configuration, allow: [NetworkAddressRange],
            maxClients: Int, clientQueueBytes: Int, batchInterval: Double
        ) {
            self.bind = bind
            self.port = port
            self.session = session
            self.allow = allow
            self.maxClients = maxClients
            self.clientQueueBytes = clientQueueBytes
            self.batchInterval = batchInterval
        }
    }

    final class Client {
        let id: Int
        let fd: Int32
        let peer: String
        var session: ESPHomeSession
        var outgoing: [UInt8] = []
        var sent = 0
        let connectedAt: Double
        var closeAfterFlush = false
        var closeRequestedAt: Double = 0
        var closeReason: ESPHomeProtocolError?
        var lastDropNotice: Double = -.infinity
        var dropped: UInt64 = 0
        var wasSubscribed = false
        /// Active connections of this client: the requests' state machine and the running connections.
        var table: ESPHomeConnectionTable
        var links: [UInt64: ESPHomeDeviceLink] = [:]

        init(
            id: Int, fd: Int32, peer: String, session: ESPHomeSession, connectedAt: Double,
            limits: ESPHomeConnectionTable.Limits
        ) {
            self.id = id
            table = ESPHomeConnectionTable(limits: limits)
            self.fd = fd
            self.peer = peer
            self.session = session
            self.connectedAt = connectedAt
        }

        var unsent: Int { outgoing.count - sent }
    }

    public let configuration: Configuration
    public let counters = ESPHomeProxyCounters()
    let crypto: (any NoiseCryptoProvider)?
    let onNotice: @Sendable (ESPHomeProxyNotice) -> Void
    let pending = Mutex<[CapturedHCIEvent]>([])
    let running = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    let subscribed = Atomic<Int>(0)
    var listener: Int32 = -1
    var wake: (read: Int32, write: Int32) = (-1, -1)
    var clients: [Client] = []
    var nextClientID = 1
    /// What active connections reported, for the server thread (`drainInbox`); `wakeOpen` is cleared (under the
    /// same lock) before the wake-up pipe closes, so a connection thread that outlives the server never writes to
    /// a descriptor number the process has reused.
    struct Inbox {
        var reports: [(ESPHomeDeviceLink, ESPHomeConnectionTable.Report)] = []
        var wakeOpen = true
    }
    let inbox = Mutex(Inbox())
    /// The port actually bound (configuration port 0 picks a free one).
    public private(set) var port = 0

    public init(
        configuration: Configuration, crypto: (any NoiseCryptoProvider)? = nil,
        onNotice: @escaping @Sendable (ESPHomeProxyNotice) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.crypto = crypto ?? (configuration.session.psk == nil ? nil : OpenSSLNoiseCrypto())
        self.onNotice = onNotice
    }

    /// Binds, listens and starts the server thread.
    public func start() throws {
        let bound = try ESPHomeSocket.listen(address: configuration.bind, port: configuration.port)
        listener = bound.fd
        port = bound.port
        guard let pipe = ESPHomeSocket.nonBlockingPipe() else {
            let code = errno
            close(listener)
            throw ESPHomeSocket.Failure(call: "pipe2", code: code)
        }
        wake = pipe
        running.store(true, ordering: .releasing)
        let code = DedicatedThread.start { [self] in
            loop()
            finished.store(true, ordering: .releasing)
        }
        guard code == 0 else {
            running.store(false, ordering: .releasing)
            throw ESPHomeSocket.Failure(call: "pthread_create", code: code)
        }
        onNotice(.listening(address: configuration.bind, port: port, encrypted: configuration.session.psk != nil))
    }

    /// Hands one HCI event to the proxy (any thread; a short lock, no I/O). Events that are not advertising
    /// reports are ignored on the server thread.
    public func submit(_ event: CapturedHCIEvent) {
        guard running.load(ordering: .relaxed) else { return }
        let accepted = pending.withLock { list -> Bool in
            guard list.count < configuration.pendingLimit else { return false }
            list.append(event)
            return true
        }
        if !accepted { counters.eventsDropped.add(1, ordering: .relaxed) }
    }

    /// Hands a batch of HCI events over under one lock (the daemon's batches).
    public func submit(_ batch: [CapturedHCIEvent]) {
        guard running.load(ordering: .relaxed), !batch.isEmpty else { return }
        let accepted = pending.withLock { list -> Int in
            let room = max(0, configuration.pendingLimit - list.count)
            list.append(contentsOf: batch.prefix(room))
            return min(room, batch.count)
        }
        if accepted < batch.count { counters.eventsDropped.add(UInt64(batch.count - accepted), ordering: .relaxed) }
    }

    /// Clients that subscribed to advertisements now.
    public var subscribedClients: Int { subscribed.load(ordering: .relaxed) }

    /// Sends the last batch, lets clients take what is queued (at most `drainTimeout` seconds), says
    /// Disconnect and closes everything. Blocks the caller: call it from a thread that may block, or await
    /// `stop(drainTimeout:) async`.
    public func stop(drainTimeout: Double = 2) async {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopDeadline.store(SystemClock.monotonic() + drainTimeout, ordering: .releasing)
        signalWake()
        while !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(10)) }
    }

    let stopDeadline = Atomic<Double>(0)

    func signalWake() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }
}
