import BeaconFormats
import DeviceProtocols

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

extension ESPHomeProxyServer {
    /// The server thread's loop; returns after `stop`.
    func loop() {
        var nextBatch = SystemClock.monotonic() + configuration.batchInterval
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while running.load(ordering: .acquiring) {
            var now = SystemClock.monotonic()
            if now >= nextBatch {
                sendBatch(now: now)
                nextBatch = now + configuration.batchInterval
            }
            for client in clients
            where !client.session.isEstablished && !client.closeAfterFlush
                && now - client.connectedAt > configuration.handshakeTimeout
            {
                finish(client, reason: .outOfOrder("no Hello within \(Int(configuration.handshakeTimeout)) s"))
            }
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            for client in clients {
                var events: Int32 = client.closeAfterFlush ? 0 : POLLIN
                if client.unsent > 0 { events |= POLLOUT }
                fds.append(pollfd(fd: client.fd, events: Int16(events), revents: 0))
            }
            now = SystemClock.monotonic()
            let timeout = Int32(max(0, min(1000, (nextBatch - now) * 1000)).rounded(.up))
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            guard ready > 0 else { continue }
            if fds[1].revents != 0 { drainWake() }
            drainInbox()
            let polled = Array(zip(clients, fds[2...]))
            for (client, entry) in polled where entry.revents != 0 {
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, !client.closeAfterFlush {
                    read(client, into: &buffer)
                }
                if client.unsent > 0 { flush(client) }
            }
            if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
            removeClosed()
        }
        shutDown()
    }

    /// Parses the events handed over since the last batch and queues the advertisements for every subscriber.
    func sendBatch(now: Double) {
        let events = pending.withLock { list -> [CapturedHCIEvent] in
            let taken = list
            list.removeAll(keepingCapacity: true)
            return taken
        }
        guard !events.isEmpty else { return }
        var advertisements: [ESPHomeRawAdvertisement] = []
        advertisements.reserveCapacity(events.count)
        for event in events where event.isAdvertisingReport {
            try? HCIEventParser.forEachReport(in: event.bytes, timestamp: event.timestamp) {
                advertisements.append(ESPHomeRawAdvertisement(report: $0))
            }
        }
        guard !advertisements.isEmpty else { return }
        counters.advertisementsReceived.add(UInt64(advertisements.count), ordering: .relaxed)
        var plaintext: [UInt8]?
        for client in clients where client.session.isSubscribed && !client.closeAfterFlush {
            guard client.unsent <= configuration.clientQueueBytes else {
                client.dropped += UInt64(advertisements.count)
                counters.advertisementsDropped.add(UInt64(advertisements.count), ordering: .relaxed)
                if now - client.lastDropNotice >= 60 {
                    client.lastDropNotice = now
                    onNotice(.clientDropping(peer: client.peer, droppedTotal: client.dropped))
                }
                continue
            }
            if configuration.session.psk == nil {
                if plaintext == nil { plaintext = client.session.frames(for: advertisements) }
                client.outgoing.append(contentsOf: plaintext!)
            } else {
                client.outgoing.append(contentsOf: client.session.frames(for: advertisements))
            }
            counters.advertisementsSent.add(UInt64(advertisements.count), ordering: .relaxed)
            flush(client)
        }
    }

    private func acceptClients() {
        while let (fd, address, peer) = ESPHomeSocket.accept(listener) {
            guard configuration.allow.contains(where: { $0.contains(address) }) else {
                close(fd)
                counters.refused.add(1, ordering: .relaxed)
                onNotice(.clientRefused(peer: peer, reason: "address not in esphome_api.allow"))
                continue
            }
            guard clients.count < configuration.maxClients else {
                close(fd)
                counters.refused.add(1, ordering: .relaxed)
                onNotice(
                    .clientRefused(peer: peer, reason: "esphome_api.max_clients (\(configuration.maxClients)) reached"))
                continue
            }
            // A bounded kernel send buffer: the queue limit, not the kernel, decides when a slow client drops.
            var sendBuffer: Int32 = 64 * 1024
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
            let session = ESPHomeSession(configuration: configuration.session, crypto: crypto)
            clients.append(
                Client(
                    id: nextClientID, fd: fd, peer: peer, session: session, connectedAt: SystemClock.monotonic(),
                    limits: configuration.activeConnections?.limits ?? .init()))
            nextClientID += 1
            counters.connections.add(1, ordering: .relaxed)
            counters.clients.store(clients.count, ordering: .relaxed)
            onNotice(.clientConnected(peer: peer, clients: clients.count))
        }
    }

    private func read(_ client: Client, into buffer: inout [UInt8]) {
        var total = 0
        while total < 256 * 1024, !client.closeAfterFlush {
            let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 {
                finish(client, reason: nil, peerClosed: true)
                return
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { finish(client, reason: nil, peerClosed: true) }
                return
            }
            total += count
            let actions = client.session.receive(buffer[0..<count])
            perform(actions, for: client)
        }
    }

    func perform(_ actions: [ESPHomeSession.Action], for client: Client) {
        for action in actions {
            switch action {
            case let .send(bytes): client.outgoing.append(contentsOf: bytes)
            case let .close(reason): finish(client, reason: reason)
            case let .bluetooth(request): handleBluetooth(request, for: client)
            case .connectionsFree: sendConnectionsFree(to: client)
            }
        }
        if client.session.isSubscribed != client.wasSubscribed {
            client.wasSubscribed = client.session.isSubscribed
            if client.wasSubscribed {
                onNotice(.clientSubscribed(peer: client.peer, clientInfo: client.session.clientInfo))
            }
            subscribed.store(
                clients.filter { $0.session.isSubscribed && !$0.closeAfterFlush }.count, ordering: .relaxed)
        }
    }

    /// Marks the client for closing once its queue is sent (immediately when the peer is gone).
    func finish(_ client: Client, reason: ESPHomeProtocolError?, peerClosed: Bool = false) {
        guard !client.closeAfterFlush else { return }
        client.closeAfterFlush = true
        client.closeRequestedAt = SystemClock.monotonic()
        client.closeReason = reason
        closeConnections(of: client)
        if reason != nil { counters.protocolErrors.add(1, ordering: .relaxed) }
        if peerClosed { client.sent = client.outgoing.count }
        onNotice(.clientClosed(peer: client.peer, clientInfo: client.session.clientInfo, reason: reason?.description))
    }

    func flush(_ client: Client) {
        while client.unsent > 0 {
            let count = client.outgoing.withUnsafeBytes { bytes in
                send(
                    client.fd, bytes.baseAddress! + client.sent, client.unsent,
                    Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK {
                    finish(client, reason: nil, peerClosed: true)
                    client.sent = client.outgoing.count
                }
                break
            }
            client.sent += count
        }
        if client.sent == client.outgoing.count {
            client.outgoing.removeAll(keepingCapacity: client.outgoing.capacity <= 1 << 20)
            client.sent = 0
        } else if client.sent > 256 * 1024 {
            client.outgoing.removeFirst(client.sent)
            client.sent = 0
        }
    }

    private func removeClosed() {
        let before = clients.count
        clients.removeAll { client in
            // A client being closed gets 2 s to take its last bytes (a reason, a DisconnectResponse).
            guard client.closeAfterFlush, client.unsent == 0 || SystemClock.monotonic() - client.closeRequestedAt > 2
            else {
                return false
            }
            close(client.fd)
            return true
        }
        if clients.count != before {
            counters.clients.store(clients.count, ordering: .relaxed)
            subscribed.store(
                clients.filter { $0.session.isSubscribed && !$0.closeAfterFlush }.count, ordering: .relaxed)
        }
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wake.read, &bytes, bytes.count) > 0 {}
    }

    /// After `stop`: the last batch, Disconnect to every client, their queues sent until the deadline, then close.
    private func shutDown() {
        sendBatch(now: SystemClock.monotonic())
        for client in clients where !client.closeAfterFlush && client.session.isEstablished {
            if let frame = client.session.frame(type: ESPHomeMessageType.disconnectRequest, body: []) {
                client.outgoing.append(contentsOf: frame)
            }
        }
        let deadline = stopDeadline.load(ordering: .acquiring)
        while SystemClock.monotonic() < deadline, clients.contains(where: { $0.unsent > 0 }) {
            var fds = clients.filter { $0.unsent > 0 }.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 50)
            for client in clients where client.unsent > 0 { flush(client) }
        }
        for client in clients {
            closeConnections(of: client)
            close(client.fd)
        }
        clients.removeAll()
        counters.clients.store(0, ordering: .relaxed)
        subscribed.store(0, ordering: .relaxed)
        close(listener)
        inbox.withLock { $0.wakeOpen = false }
        close(wake.read)
        close(wake.write)
    }
}
