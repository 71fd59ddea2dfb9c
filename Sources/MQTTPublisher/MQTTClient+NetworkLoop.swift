import BeaconModel
import CMosquitto

#if canImport(Glibc)
import Glibc
#endif

extension MQTTClient {
    /// The network thread: connect, run `mosquitto_loop` until the connection fails, back off, reconnect.
    func runNetworkLoop() {
        let settings = options.settings
        let target = "connect to \(settings.host):\(settings.port)"
        var attempt = 0
        var firstAttempt = true
        while !isStopping {
            if !firstAttempt && options.cleanSession {
                do throws(MQTTError) {
                    try reinitialise()
                    firstAttempt = true
                } catch {
                    attempt += 1
                    let delay = MQTTClient.backoff(
                        attempt: attempt, minimum: settings.reconnectMin, maximum: settings.reconnectMax)
                    onEvent(.connectionFailed(error.failure, retryIn: delay))
                    sleepUnlessStopped(delay)
                    continue
                }
            }
            state.withLock {
                $0.lastLog = nil
                $0.refusal = nil
                $0.connackSeen = false
                $0.awaitingAck.removeAll()
                $0.packetBoundary = 0
                $0.packetEndedSinceCheck = false
                $0.readSinceCheck = false
            }
            installLogCallback()
            let rc = turnLock.withLock { _ in firstAttempt ? connect() : mosquitto_reconnect(handle) }
            firstAttempt = false
            var failure: MQTTError
            if rc != MQTTError.success {
                failure = connectionError(target, rc)
            } else {
                var loopRC = MQTTError.success
                var oversized: Int64?
                state.withLock { $0.callerWrites = true }
                while loopRC == MQTTError.success && !isStopping && oversized == nil {
                    // Everything that needs the thread sooner wakes it (flush, subscribe, stop): the timeout only
                    // paces the keepalive (`mosquitto_loop_misc`), so an idle gateway wakes once a second.
                    loopRC = pump(timeoutMilliseconds: MQTTClient.idlePollMilliseconds)
                    oversized = incomingPacketOverLimit()
                }
                // Taken, so no write from a caller is under way once the loop has ended.
                turnLock.withLock { _ in state.withLock { $0.callerWrites = false } }
                if isStopping { break }
                if let oversized {
                    // Cut it off; the reconnect below closes the socket and frees the partial packet.
                    shutdown(mosquitto_socket(handle), Int32(SHUT_RDWR))
                    failure = MQTTError(
                        operation: target, code: Int32(MOSQ_ERR_OVERSIZE_PACKET.rawValue),
                        message: "the broker sent a packet larger than \(MQTTClient.maxIncomingPacket) bytes "
                            + "(\(oversized) received so far; the gateway's limit for incoming packets): connection dropped"
                    )
                } else {
                    failure = connectionError(target, loopRC, afterConnect: true)
                }
            }
            let wasConnected = state.withLock { $0.connackSeen }
            attempt = wasConnected ? 1 : attempt + 1
            let delay = MQTTClient.backoff(
                attempt: attempt, minimum: settings.reconnectMin, maximum: settings.reconnectMax)
            onEvent(
                wasConnected
                    ? .disconnected(failure.failure, retryIn: delay)
                    : .connectionFailed(failure.failure, retryIn: delay))
            sleepUnlessStopped(delay)
        }
        endSession()
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished = true
            defer { state.stopWaiters.removeAll() }
            return state.stopWaiters
        }
        onEvent(.stopped)
        for waiter in waiters { waiter.resume() }
    }

    /// A clean end of the session, all on the network thread (the only one that writes to the socket): send
    /// what is still queued (the `offline` message, say) and wait for the broker's acknowledgements, then send
    /// DISCONNECT and run the loop until libmosquitto has written it and closed the socket. Closing a socket
    /// with unread data (acknowledgements still on their way) makes the kernel reset the connection and drop
    /// what was not sent yet: the broker then logged "disconnected due to out of memory" or "closed its
    /// connection" instead of the DISCONNECT and fired the last will after the explicit `offline`. Each step
    /// is bounded (about 2 s in all), so a broker that stopped answering cannot hold up the stop.
    /// The corresponding C functions are `mosquitto_want_write`, `mosquitto_disconnect` and `mosquitto_loop`.
    func endSession() {
        guard state.withLock({ $0.connackSeen }), mosquitto_socket(handle) >= 0 else { return }
        var rounds = 0
        while (mosquitto_want_write(handle) || state.withLock({ !$0.awaitingAck.isEmpty })) && rounds < 30 {
            guard pump(timeoutMilliseconds: 50) == MQTTError.success else { return }
            rounds += 1
        }
        guard turnLock.withLock({ _ in mosquitto_disconnect(handle) }) == MQTTError.success else { return }
        for _ in 0..<10 {
            guard mosquitto_socket(handle) >= 0, pump(timeoutMilliseconds: 50) == MQTTError.success else { return }
        }
    }

    /// One turn of the network loop, in place of `mosquitto_loop`: waits at most `timeoutMilliseconds` for the
    /// socket or the wake-up pipe, then reads what arrived (acknowledgements, inbound messages), writes
    /// everything queued and handles the keepalive. `mosquitto_loop` would also wait on libmosquitto's internal
    /// socket pair, which gets a byte for every queued packet and gives up one per call: one wake-up per message.
    /// Several messages published since the last turn are written with the socket corked (`TCP_CORK`), so they
    /// leave in as few segments as fit instead of one each.
    /// While connecting, a writable socket also drives the TLS handshake (libmosquitto continues it in
    /// `mosquitto_loop_read`, as `mosquitto_loop` does). Returns a libmosquitto code.
    /// The corresponding C functions are `mosquitto_loop_read`, `mosquitto_loop_write`, `mosquitto_loop_misc`.
    func pump(timeoutMilliseconds: Int32) -> Int32 {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return Int32(MOSQ_ERR_NO_CONN.rawValue) }
        let wantWrite = mosquitto_want_write(handle)
        // No allocation per turn: the two pollfds and the drain buffer live on the stack.
        var descriptors = (
            pollfd(fd: socket, events: Int16(POLLIN) | (wantWrite ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakeDescriptors.read, events: Int16(POLLIN), revents: 0)
        )
        let ready = withUnsafeMutablePointer(to: &descriptors) { pair in
            pair.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, timeoutMilliseconds) }
        }
        if ready < 0 && errno != EINTR { return MQTTError.errno }
        if descriptors.1.revents != 0 {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { sink in
                while read(wakeDescriptors.read, sink.baseAddress, sink.count) == sink.count {}
            }
        }
        let readable = descriptors.0.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0
        let writable = descriptors.0.revents & Int16(POLLOUT) != 0
        return turnLock.withLock { _ in
            if readable || (writable && !state.withLock({ $0.connackSeen })) {
                state.withLock { $0.readSinceCheck = true }
                let rc = mosquitto_loop_read(handle, 1)
                guard rc == MQTTError.success else { return rc }
            }
            if mosquitto_want_write(handle) {
                let rc = writeQueued(socket: socket)
                guard rc == MQTTError.success else { return rc }
            }
            return mosquitto_loop_misc(handle)
        }
    }

    /// Writes what libmosquitto has queued, with `turnLock` held (a turn of the network thread, or
    /// `writeFromCaller`). libmosquitto writes each queued packet with its own write(2), and the socket has
    /// TCP_NODELAY: a batch of n messages would leave as n segments, each a trip through the stack and a wake-up
    /// of the broker. Corked, they leave together when the cork comes out, right after the writes.
    /// The corresponding C function is `mosquitto_loop_write`.
    func writeQueued(socket: Int32) -> Int32 {
        let batch = state.withLock { state -> Int in
            defer { state.publishedSinceWrite = 0 }
            return state.publishedSinceWrite
        }
        let corked = batch > 1 && beaconbridge_tcp_cork(socket, 1) == 0
        let rc = mosquitto_loop_write(handle, 1)
        if corked { _ = beaconbridge_tcp_cork(socket, 0) }
        return rc
    }

    /// CONNECT; over MQTT 5 with the Maximum Packet Size property (`maxIncomingPacket`), so a compliant
    /// broker never sends a larger packet. The corresponding C functions are `mosquitto_connect` and
    /// `mosquitto_connect_bind_v5`.
    func connect() -> Int32 {
        let settings = options.settings
        guard settings.protocolVersion == .v5 else {
            return mosquitto_connect(handle, settings.host, Int32(settings.port), Int32(settings.keepalive))
        }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        let rc = mosquitto_property_add_int32(
            &properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue),
            UInt32(MQTTClient.maxIncomingPacket))
        guard rc == MQTTError.success else { return rc }
        return mosquitto_connect_bind_v5(
            handle, settings.host, Int32(settings.port), Int32(settings.keepalive), nil, properties)
    }

    /// Notes that a whole incoming packet was handled (called from the callbacks). The socket's byte count is
    /// read once per turn, in `incomingPacketOverLimit`, not here: with QoS 1 every message brings a PUBACK, and
    /// a `TCP_INFO` call per acknowledgement was about 6 % of the gateway's CPU with a message per report.
    func incomingPacketEnded() {
        state.withLock { $0.packetEndedSinceCheck = true }
    }

    /// libmosquitto reads a packet of whatever length the broker declares (up to 256 MiB) into memory before
    /// it hands it over; it has no limit of its own for incoming packets. The client watches the socket's
    /// received byte count instead: more than `maxIncomingPacket` bytes (plus a 64 KiB margin for small packets
    /// that fire no callback, such as PINGRESP) since the last packet it saw completed means a packet over the
    /// limit is arriving. Returns the bytes received since then, nil while within the limit.
    ///
    /// Called after every turn of the loop; only a turn that read from the socket can have moved libmosquitto
    /// on, so the others cost no system call. When packets completed during the turn, the boundary becomes the
    /// count now: the packet after the last completed one starts there at the latest, as it did when the count
    /// was read in every callback (the kernel's count always runs ahead of what libmosquitto has read). The
    /// boundary can be later than the packet's end by what else arrived in that turn (for a paced peer, one
    /// read's worth), so a packet over the limit is cut off that much later, never earlier (docs/mqtt.md).
    func incomingPacketOverLimit() -> Int64? {
        let (didRead, packetEnded) = state.withLock { state in
            defer {
                state.readSinceCheck = false
                state.packetEndedSinceCheck = false
            }
            return (state.readSinceCheck, state.packetEndedSinceCheck)
        }
        guard didRead || packetEnded else { return nil }
        let received = beaconbridge_tcp_bytes_received(mosquitto_socket(handle))
        guard received >= 0 else { return nil }
        let since = state.withLock { state -> Int64 in
            if packetEnded { state.packetBoundary = received }
            return received - state.packetBoundary
        }
        return since > Int64(MQTTClient.maxIncomingPacket + 65536) ? since : nil
    }

    /// The error for a failed connect or loop, with the broker's refusal and libmosquitto's last logged error.
    /// `afterConnect`: the TCP connection was made and CONNECT sent; a plain client whose connection then
    /// breaks before any CONNACK is most likely talking to a TLS port, and is told so.
    func connectionError(_ operation: String, _ rc: Int32, afterConnect: Bool = false) -> MQTTError {
        let savedErrno = errno
        let (refusal, lastLog, connackSeen) = state.withLock { ($0.refusal, $0.lastLog, $0.connackSeen) }
        errno = savedErrno
        var error = MQTTError(
            operation: operation, code: rc,
            detail: rc == MQTTError.errno && savedErrno != 0 ? String(cString: strerror(savedErrno)) : nil)

        if let refusal {
            error.refusal = refusal
            let reason =
                options.settings.protocolVersion == .v5
                ? String(cString: mosquitto_reason_string(refusal)) : String(cString: mosquitto_connack_string(refusal))
            error.message = "broker refused the connection: \(reason)"
        } else if let lastLog {
            error.message += ": \(lastLog)"
        }
        if afterConnect, refusal == nil, !connackSeen, options.settings.tls == nil {
            error.message += "; \(MQTTError.plainClientHint)"
        }
        return error
    }

    func sleepUnlessStopped(_ seconds: Double) {
        var remaining = seconds
        while remaining > 0 && !isStopping {
            let step = min(remaining, 0.02)
            usleep(UInt32(step * 1_000_000))
            remaining -= step
        }
    }

    /// Installs the C callbacks; each only records state or hands an event to `onEvent`.
    func installCallbacks() {
        mosquitto_connect_callback_set(handle) { _, context, rc in
            guard let client = MQTTClient.from(context) else { return }
            client.incomingPacketEnded()
            if rc == 0 {
                client.state.withLock { $0.connackSeen = true }
                // libmosquitto formats every debug line for a log callback: off while connected, where the
                // return codes say enough; back on for the next connection attempt (TLS details).
                mosquitto_log_callback_set(client.handle, nil)
                client.onEvent(.connected)
            } else {
                client.state.withLock { $0.refusal = rc }
            }
        }
        // The v5 callback also fires for MQTT 3.1.1 connections (reason code 0); the v3 one would drop the
        // reason code of an MQTT 5 PUBACK/PUBREC, counting a refusal as delivered.
        mosquitto_publish_v5_callback_set(handle) { _, context, mid, reasonCode, _ in
            guard let client = MQTTClient.from(context) else { return }
            let messageID = client.messageID(mid)
            client.incomingPacketEnded()
            client.state.withLock { _ = $0.awaitingAck.remove(messageID) }
            client.onEvent(
                reasonCode >= 0x80
                    ? .refused(messageID: messageID, reasonCode: reasonCode)
                    : .acknowledged(messageID: messageID))
        }
        mosquitto_subscribe_callback_set(handle) { _, context, mid, _, _ in
            guard let client = MQTTClient.from(context) else { return }
            client.incomingPacketEnded()
            client.onEvent(.subscribed(messageID: mid))
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let client = MQTTClient.from(context), let message = message?.pointee else { return }
            client.incomingPacketEnded()
            let topic = message.topic.map { String(cString: $0) } ?? ""
            var payload: [UInt8] = []
            if let bytes = message.payload, message.payloadlen > 0 {
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
            }
            client.onEvent(.message(topic: topic, payload: payload))
        }
    }

    /// Records libmosquitto's last error or warning line (OpenSSL's reason for a failed handshake, say) so
    /// the connection error can quote it. Installed for connection attempts only.
    func installLogCallback() {
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let client = MQTTClient.from(context), let text else {
                return
            }
            let line = String(cString: text)
            client.state.withLock { $0.lastLog = line }
        }
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> MQTTClient? {
        context.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }
}
