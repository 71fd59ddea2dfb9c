import BeaconDelivery
import BeaconRuntime
import CLinux
import CMosquitto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An MQTT connection through libmosquitto, driven by its own network thread that connects, runs
/// `mosquitto_loop` and reconnects with capped exponential backoff and jitter, reporting every step through
/// `onEvent`. Publishing and subscribing are safe from any thread.
///
/// `@unchecked Sendable`. Invariant: `handle` is created `threaded`, so `mosquitto_publish` and
/// `mosquitto_subscribe` may be called from any thread; `mosquitto_connect`, `mosquitto_reconnect`,
/// `mosquitto_disconnect` and `mosquitto_loop` run only on the network thread; `mosquitto_destroy` runs in
/// `deinit`, which cannot happen before the network thread (which retains the client) has ended. All other
/// mutable state lives in `state`, a `Mutex`.
public final class MQTTClient: @unchecked Sendable {
    struct State {
        var started = false
        var stopping = false
        var finished = false
        var connackSeen = false
        var refusal: Int32?
        var lastLog: String?
        /// QoS 1/2 message ids sent on this connection and not acknowledged yet (for a clean end of the session;
        /// an id whose acknowledgement overtook `publish` returning stays until the next connection, which only
        /// makes a stop wait its bound).
        var awaitingAck: Set<Int32> = []
        /// A publish or subscribe since the last `flush()`: the network thread has not been woken for it yet.
        var unflushed = false
        /// Messages published since the last write (more than one: write them corked).
        var publishedSinceWrite = 0
        /// The network thread is in its connected loop: `flush()` may write from the caller's thread (`turnLock`).
        var callerWrites = false
        /// The socket's received byte count at the end of the last turn in which an incoming packet was
        /// handled (`incomingPacketOverLimit`).
        var packetBoundary: Int64 = 0
        /// An incoming packet was handled since the last `incomingPacketOverLimit` (`incomingPacketEnded`).
        var packetEndedSinceCheck = false
        /// The network thread read from the socket since the last `incomingPacketOverLimit`.
        var readSinceCheck = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let handle: OpaquePointer
    public let options: MQTTClientOptions
    let onEvent: @Sendable (TransportEvent) -> Void
    let state = Mutex(State())
    /// Held around every libmosquitto call made from outside the network thread (publish, subscribe) and around `mosquitto_reinitialise` on the network thread, which rebuilds the handle.
    let handleLock = Mutex(())
    /// Whoever touches the socket holds this: the network thread for each turn after its `poll` (read, write,
    /// keepalive) and around connecting, reconnecting, rebuilding the handle and disconnecting; `flush()` for a
    /// write from the caller's thread, which it makes only if it gets the lock at once (`writeFromCaller`). So
    /// reads and writes never overlap (TLS needs that) and a caller never waits for a connect.
    let turnLock = Mutex(())
    /// Wakes the network thread out of `poll` (`flush()`, `stop()`): a non-blocking pipe, read end first.
    /// libmosquitto's own wake-up (a byte on its internal socket pair per queued packet, read one per
    /// `mosquitto_loop`) would wake the thread once per message; the loop here never polls that pair.
    let wakeDescriptors: (read: Int32, write: Int32)
    /// How many times the handle was rebuilt (`reinitialise()`), the high bits of every message id this client
    /// reports (`messageID(_:)`). Written only by the network thread, with `handleLock` held; read with
    /// `handleLock` held (publish) or on the network thread (callbacks), so it is stable wherever it is read.
    let handleGeneration = Atomic<UInt32>(0)

    /// The largest packet the client accepts from the broker (1 MiB; the gateway subscribes only to small
    /// control topics). Over MQTT 5 the broker is told in CONNECT (Maximum Packet Size); a larger packet is
    /// cut off after about this many bytes and the connection dropped (`incomingPacketOverLimit`).
    public static let maxIncomingPacket = 1 << 20

    private static let libraryReady: Bool = { mosquitto_lib_init() == MQTTError.success }()

    /// Creates and configures the libmosquitto handle (no network traffic until `start()`).
    /// The corresponding C functions are `mosquitto_new`, `mosquitto_tls_set`, `mosquitto_will_set`, ...
    public init(options: MQTTClientOptions, onEvent: @escaping @Sendable (TransportEvent) -> Void) throws(MQTTError) {
        guard MQTTClient.libraryReady, let handle = mosquitto_new(options.clientID, options.cleanSession, nil) else {
            throw MQTTError(operation: "create client", code: MQTTError.errno, detail: String(cString: strerror(errno)))
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard bb_pipe2(&pipeEnds, O_NONBLOCK | O_CLOEXEC) == 0 else {
            let code = errno
            mosquitto_destroy(handle)
            throw MQTTError(
                operation: "create the network thread's wake-up pipe", code: MQTTError.errno,
                detail: String(cString: strerror(code)))
        }
        self.wakeDescriptors = (pipeEnds[0], pipeEnds[1])
        self.handle = handle
        self.options = options
        self.onEvent = onEvent
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        try configure()
        installCallbacks()
    }

    /// A fresh handle before a reconnect with a clean session: libmosquitto would otherwise resend the QoS 1/2
    /// messages it still holds from the broken connection, including one the broker refuses by disconnecting
    /// (docs/outbox.md), over and over. The publisher has already put everything unacknowledged back in the
    /// outbox, so nothing is lost. Network thread only. The corresponding C function is `mosquitto_reinitialise`.
    func reinitialise() throws(MQTTError) {
        let rc = turnLock.withLock { _ in
            handleLock.withLock { _ in
                handleGeneration.add(1, ordering: .relaxed)
                return mosquitto_reinitialise(
                    handle, options.clientID, true, Unmanaged.passUnretained(self).toOpaque())
            }
        }
        guard rc == MQTTError.success else { throw MQTTError(operation: "reinitialise the client", code: rc) }
        try handleLock.withLock { (_) throws(MQTTError) in try configure() }
        installCallbacks()
    }

    deinit {
        mosquitto_destroy(handle)
        close(wakeDescriptors.read)
        close(wakeDescriptors.write)
    }

    private func configure() throws(MQTTError) {
        let settings = options.settings
        func check(_ rc: Int32, _ operation: String) throws(MQTTError) {
            guard rc == MQTTError.success else { throw MQTTError(operation: operation, code: rc) }
        }
        try check(mosquitto_threaded_set(handle, true), "set threaded mode")
        try check(
            mosquitto_int_option(
                handle, MOSQ_OPT_PROTOCOL_VERSION,
                settings.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311),
            "set protocol version \(settings.protocolVersion.rawValue)")
        try check(
            mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, Int32(clamping: settings.inflightWindow)),
            "set send maximum")
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "set TCP_NODELAY")
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, options.password), "set username and password")
        }
        if let will = options.will {
            var payload = will.payload
            let rc = payload.withUTF8 { buffer in
                mosquitto_will_set(
                    handle, will.topic, Int32(buffer.count), buffer.baseAddress, Int32(will.qos), will.retain)
            }
            try check(rc, "set will on \(will.topic)")
        }
        if let tls = settings.tls {
            try check(
                mosquitto_tls_set(handle, tls.caFile, tls.caDir, tls.certFile, tls.keyFile, nil),
                "configure TLS (ca_file \(tls.caFile ?? "-"), cert_file \(tls.certFile ?? "-"))")
            try check(mosquitto_tls_opts_set(handle, tls.verify ? 1 : 0, tls.version, nil), "set TLS options")
            try check(mosquitto_tls_insecure_set(handle, !(tls.verify && tls.verifyHostname)), "set TLS hostname check")
        }
    }

    /// Starts the network thread: connect, loop, reconnect until `stop()`.
    public func start() {
        let alreadyStarted = state.withLock { state -> Bool in
            defer { state.started = true }
            return state.started
        }
        precondition(!alreadyStarted, "MQTTClient.start() called twice")
        let rc = DedicatedThread.start(name: "bb-mqtt-network") { [self] in self.runNetworkLoop() }
        guard rc == 0 else {
            // No network thread: reported like a failed connection (never a trap); `stop()` returns at once.
            state.withLock { $0.started = false }
            onEvent(
                .connectionFailed(
                    MQTTError(
                        operation: "start the network thread", code: MQTTError.errno,
                        detail: "pthread_create: " + String(cString: strerror(rc))
                    ).failure,
                    retryIn: 0))
            return
        }
    }

    /// Ends the network thread, which first sends what is queued and a DISCONNECT (`endSession()`); returns
    /// once it has ended. Safe to call more than once.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                state.stopping = true
                if state.finished || !state.started { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() } else { wake() }
        }
    }

    /// Queues a message; returns its message id (`messageID(_:)`: never reused after a reconnect). The
    /// acknowledgement (`.acknowledged`) can arrive before this returns. The message goes out at `flush()` (or at
    /// the network thread's next turn, at most `idlePollMilliseconds` later), so a batch is one write.
    /// The corresponding C function is `mosquitto_publish`.
    public func publish(topic: String, payload: String, qos: UInt8, retain: Bool) -> Result<Int32, TransportFailure> {
        var messageID: Int32 = 0
        var payload = payload
        let rc = payload.withUTF8 { buffer in
            handleLock.withLock { _ in
                var mid: Int32 = 0
                let rc = mosquitto_publish(
                    handle, &mid, topic, Int32(buffer.count), buffer.baseAddress, Int32(qos), retain)
                messageID = self.messageID(mid)
                return rc
            }
        }
        guard rc == MQTTError.success else {
            return .failure(MQTTError(operation: "publish to \(topic)", code: rc).failure)
        }
        state.withLock { state in
            if qos > 0 { state.awaitingAck.insert(messageID) }
            state.unflushed = true
            state.publishedSinceWrite += 1
        }
        return .success(messageID)
    }

    /// Sends everything published since the last call: written at once from the caller's thread when the
    /// connection is up and the network thread is between turns (`writeFromCaller`), else the network thread is
    /// woken once to write it in its next turn. Cheap when nothing was published.
    public func flush() {
        let needed = state.withLock { state -> Bool in
            defer { state.unflushed = false }
            return state.unflushed
        }
        if needed && !writeFromCaller() { wake() }
    }

    /// Writes what is queued from the caller's thread, so a batch costs no wake-up of the network thread (on
    /// this machine a wake-up costs about 28 µs of CPU, docs/daemon-bench.md). Only while the network thread is
    /// in its connected loop and not in a turn: the lock is tried, never waited for. Returns false when the
    /// network thread must still be woken: the lock was busy, no connection, an error (the network thread meets
    /// it too, in its own turn, and reconnects), or data left over that needs the socket to become writable.
    /// The corresponding C functions are `mosquitto_loop_write` and `mosquitto_want_write`.
    func writeFromCaller() -> Bool {
        let written = turnLock.withLockIfAvailable { _ -> Bool in
            guard state.withLock({ $0.callerWrites }) else { return false }
            let socket = mosquitto_socket(handle)
            guard socket >= 0, writeQueued(socket: socket) == MQTTError.success else { return false }
            return !mosquitto_want_write(handle)
        }
        return written ?? false
    }

    /// How long the network thread waits for the socket or a wake-up before its keepalive turn (1 s, as
    /// `mosquitto_loop_forever`).
    static let idlePollMilliseconds: Int32 = 1000

    /// One byte into the wake-up pipe (a full pipe already means "wake up").
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeDescriptors.write, &byte, 1)
    }

    /// Subscribes. The corresponding C function is `mosquitto_subscribe`.
    @discardableResult
    public func subscribe(_ pattern: String, qos: UInt8) -> TransportFailure? {
        let rc = handleLock.withLock { _ in mosquitto_subscribe(handle, nil, pattern, Int32(qos)) }
        guard rc == MQTTError.success else { return MQTTError(operation: "subscribe to \(pattern)", code: rc).failure }
        wake()
        return nil
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// The id reported for libmosquitto's message id `mid` (1...65535) on the current handle: the handle's
    /// generation in the high bits. libmosquitto numbers messages from 1 again after `mosquitto_reinitialise`
    /// (every reconnect with a clean session), while acknowledgements and the disconnect of the previous
    /// connection may still be on their way to the publisher: with raw ids an acknowledgement (or an MQTT 5
    /// refusal) of one connection was applied to a different message of the next, which was then counted as
    /// delivered or refused wrongly, and the message it displaced was never sent again. 32,768 generations
    /// before the ids repeat; the publisher forgets every id of a connection when it learns of the disconnect.
    func messageID(_ mid: Int32) -> Int32 {
        Int32(
            bitPattern: (handleGeneration.load(ordering: .relaxed) & 0x7FFF) << 16 | (UInt32(bitPattern: mid) & 0xFFFF))
    }

    /// Capped exponential backoff with jitter: a uniformly random delay in [d/2, d], d = min(max, min * 2^(n-1)).
    static func backoff(attempt: Int, minimum: Double, maximum: Double) -> Double {
        var ceiling = minimum
        for _ in 1..<max(1, min(attempt, 40)) { ceiling = min(maximum, ceiling * 2) }
        ceiling = min(maximum, ceiling)
        return ceiling / 2 + Double.random(in: 0...(ceiling / 2))
    }
}
