import BeaconRuntime

#if canImport(Glibc)
import Glibc
#endif

extension StatusHTTPServer {
    /// The server thread's loop; returns after `stop`, with every descriptor closed.
    func loop() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while running.load(ordering: .acquiring) {
            expire(now: SystemClock.monotonic())
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            for connection in connections {
                let events: Int32 =
                    switch connection.phase {
                    case .reading, .lingering: POLLIN
                    case .writing: POLLOUT
                    case .closed: 0
                    }
                fds.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
            }
            // Nobody connected: sleep until a connection or `stop` (no timeout, no CPU at idle).
            var timeout: Int32 = -1
            if let next = connections.map(\.deadline).min() {
                let milliseconds = (next - SystemClock.monotonic()) * 1000
                timeout = Int32(max(0, min(60_000, milliseconds)).rounded(.up))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            guard ready > 0 else { continue }
            if fds[1].revents != 0 { drainWake() }
            for (connection, entry) in zip(connections, fds[2...]) where entry.revents != 0 {
                switch connection.phase {
                case .reading: read(connection, into: &buffer)
                case .writing: flush(connection)
                case .lingering: discard(connection, into: &buffer)
                case .closed: break
                }
            }
            // Closed ones first: a connection closed in this turn must not count against `max_connections`.
            removeClosed()
            if fds[0].revents & Int16(POLLIN) != 0 { acceptConnections() }
        }
        for connection in connections where connection.phase != .closed { close(connection.fd) }
        connections.removeAll()
        counters.open.store(0, ordering: .relaxed)
        close(listener)
        wake.close()
    }

    /// Connections past their deadline: one still reading is answered 408 (it gets one more second to take it),
    /// any other is closed.
    private func expire(now: Double) {
        for connection in connections where now >= connection.deadline && connection.phase != .closed {
            if connection.phase == .reading {
                counters.timedOut.add(1, ordering: .relaxed)
                respond(
                    connection,
                    .refusal(
                        HTTPRefusal(
                            408,
                            "the request was not complete within \(Int(configuration.requestTimeout)) s")),
                    head: false, deadline: now + 1)
            } else {
                closeConnection(connection)
            }
        }
    }

    private func acceptConnections() {
        for _ in 0..<64 {
            guard let fd = HTTPSocket.accept(listener) else { return }
            guard connections.count < configuration.maxConnections else {
                // A clear refusal, best effort (a fresh socket's send buffer takes it), then closed.
                counters.overloaded.add(1, ordering: .relaxed)
                let bytes = HTTPResponse.refusal(
                    HTTPRefusal(503, "\(configuration.maxConnections) connections are open; try again")
                ).serialized()
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                shutdown(fd, Int32(SHUT_RDWR))
                close(fd)
                continue
            }
            connections.append(
                Connection(
                    fd: fd, deadline: SystemClock.monotonic() + configuration.requestTimeout,
                    limits: configuration.limits))
            counters.open.store(connections.count, ordering: .relaxed)
        }
    }

    private func read(_ connection: Connection, into buffer: inout [UInt8]) {
        // Bounded: the parser refuses a request larger than its limits long before this many rounds.
        for _ in 0..<16 where connection.phase == .reading {
            let count = buffer.withUnsafeMutableBytes {
                recv(connection.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count == 0 {
                closeConnection(connection)
                return
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
                return
            }
            switch connection.parser.receive(buffer[0..<count]) {
            case .incomplete:
                continue
            case let .refused(refusal):
                counters.refused.add(1, ordering: .relaxed)
                respond(connection, .refusal(refusal), head: false)
            case let .complete(request):
                counters.requests.add(1, ordering: .relaxed)
                respond(connection, handler(request), head: request.method == "HEAD")
            }
        }
    }

    /// Queues the response and starts writing it; the connection then has `requestTimeout` seconds (or until
    /// `deadline`) to take it.
    private func respond(_ connection: Connection, _ response: HTTPResponse, head: Bool, deadline: Double? = nil) {
        connection.outgoing = response.serialized(head: head)
        connection.sent = 0
        connection.phase = .writing
        connection.deadline = deadline ?? SystemClock.monotonic() + configuration.requestTimeout
        flush(connection)
    }

    private func flush(_ connection: Connection) {
        while connection.sent < connection.outgoing.count {
            let count = connection.outgoing.withUnsafeBytes { bytes in
                send(
                    connection.fd, bytes.baseAddress! + connection.sent, bytes.count - connection.sent,
                    Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
                return
            }
            connection.sent += count
        }
        // Sent: shut the write side and read what the client still sends for at most a second.
        connection.outgoing = []
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.phase = .lingering
        connection.deadline = min(connection.deadline, SystemClock.monotonic() + 1)
    }

    private func discard(_ connection: Connection, into buffer: inout [UInt8]) {
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes {
                recv(connection.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { closeConnection(connection) }
                return
            }
        }
    }

    private func closeConnection(_ connection: Connection) {
        guard connection.phase != .closed else { return }
        close(connection.fd)
        connection.phase = .closed
    }

    private func removeClosed() {
        let before = connections.count
        connections.removeAll { $0.phase == .closed }
        if connections.count != before { counters.open.store(connections.count, ordering: .relaxed) }
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wake.read, &bytes, bytes.count) > 0 {}
    }
}
