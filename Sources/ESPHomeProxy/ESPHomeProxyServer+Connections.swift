import BeaconFormats
import BeaconModel
import DeviceProtocols
import GATTLink

extension ESPHomeProxyServer {
    /// Active connections (`esphome_api.active_connections` with `gatt.enabled`): the daemon's GATT slot pool
    /// (shared with its MQTT GATT commands, so the free count is right for both), the adapter and the timeouts
    /// of `gatt`, and the bounds per client and per connection.
    public struct ActiveConnections: Sendable {
        public var adapter: AdapterSelector
        public var slots: ConnectionSlots
        public var connectTimeout: Double
        public var requestTimeout: Double
        public var limits: ESPHomeConnectionTable.Limits
        /// `gatt.allowed_devices`: the only devices clients may connect to; empty: any.
        public var allowedDevices: [BluetoothAddress] = []
        /// Notifications of one connection waiting for the server thread; more are dropped (counted).
        public var notificationLimit = 64
        /// How long a connection's thread listens for notifications before it looks for work again (seconds).
        public var idleWait = 0.02
        /// Opens a connection (on the link's thread): `GATTConnection.open` on `adapter` over `slots` unless a
        /// test hands its own (a peer on a socket pair). Must hold a slot of `slots` for as long as it is open.
        public var open:
            (@Sendable (_ device: BluetoothAddress, _ random: Bool) throws(GATTLinkError) -> GATTConnection)?

        public init(
            adapter: AdapterSelector, slots: ConnectionSlots, connectTimeout: Double, requestTimeout: Double,
            limits: ESPHomeConnectionTable.Limits = .init()
        ) {
            self.adapter = adapter
            self.slots = slots
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.limits = limits
        }
    }

    /// A connection request of `client`: through its table to actions.
    func handleBluetooth(_ request: ESPHomeConnectionRequest, for client: Client) {
        apply(client.table.request(request), for: client)
    }

    func apply(_ actions: [ESPHomeConnectionTable.Action], for client: Client) {
        for action in actions {
            switch action {
            case let .reply(type, body):
                if let frame = client.session.frame(type: type, body: body) {
                    client.outgoing.append(contentsOf: frame)
                }
            case .connectionsFree:
                broadcastConnectionsFree()
            case let .open(address, random):
                open(address, random: random, for: client)
            case let .close(address):
                client.links[address]?.close()
            case let .perform(address, operation):
                client.links[address]?.submit(operation)
            }
        }
    }

    private func open(_ address: UInt64, random: Bool, for client: Client) {
        guard let active = configuration.activeConnections else {
            apply(client.table.report(.ended(error: ESPHomeBluetoothError.notAvailable), from: address), for: client)
            return
        }
        guard active.allowedDevices.isEmpty || active.allowedDevices.contains(BluetoothAddress(rawValue: address))
        else {
            onNotice(
                .deviceRefused(
                    peer: client.peer, device: BluetoothAddress(rawValue: address).description,
                    reason: "not in gatt.allowed_devices"))
            apply(client.table.report(.ended(error: ESPHomeBluetoothError.notAvailable), from: address), for: client)
            return
        }
        let link = ESPHomeDeviceLink(clientID: client.id, address: address, random: random, settings: active) {
            [self] link, report in
            inbox.withLock { inbox in
                guard inbox.wakeOpen else { return }
                inbox.reports.append((link, report))
                signalWake()
            }
        }
        client.links[address] = link
        counters.gattConnects.add(1, ordering: .relaxed)
        onNotice(.deviceConnecting(peer: client.peer, device: BluetoothAddress(rawValue: address).description))
        if !link.start() {
            client.links[address] = nil
            apply(client.table.report(.ended(error: ESPHomeBluetoothError.noResources), from: address), for: client)
        }
    }

    /// What the connections reported since the last pass, each to its client's table (server thread).
    func drainInbox() {
        let reports = inbox.withLock { inbox -> [(ESPHomeDeviceLink, ESPHomeConnectionTable.Report)] in
            let taken = inbox.reports
            inbox.reports.removeAll(keepingCapacity: true)
            return taken
        }
        for (link, report) in reports {
            let client = clients.first { $0.id == link.clientID && !$0.closeAfterFlush }
            switch report {
            case .notification:
                link.notificationTaken()
                if let client, client.unsent > configuration.clientQueueBytes {
                    counters.notificationsDropped.add(1, ordering: .relaxed)
                    continue
                }
            case let .ended(error):
                let dropped = link.notificationsDropped.load(ordering: .relaxed)
                counters.notificationsDropped.add(dropped, ordering: .relaxed)
                onNotice(
                    .deviceDisconnected(
                        peer: client?.peer ?? "-", device: BluetoothAddress(rawValue: link.address).description,
                        error: error))
                if let client, client.links[link.address] === link { client.links[link.address] = nil }
            case .connected(let mtu):
                onNotice(
                    .deviceConnected(
                        peer: client?.peer ?? "-", device: BluetoothAddress(rawValue: link.address).description,
                        mtu: Int(mtu)))
            default:
                break
            }
            guard let client else {
                // The client is gone (its links were closed): only the free count changes, once a link ends.
                if case .ended = report { broadcastConnectionsFree() }
                if case .connected = report { link.close() }
                continue
            }
            apply(client.table.report(report, from: link.address), for: client)
            if client.unsent > 0 { flush(client) }
        }
    }

    /// `BluetoothConnectionsFreeResponse` of the daemon's pool to `client`.
    func sendConnectionsFree(to client: Client) {
        guard
            let frame = client.session.frame(
                type: ESPHomeMessageType.bluetoothConnectionsFreeResponse, body: connectionsFreeBody())
        else { return }
        client.outgoing.append(contentsOf: frame)
    }

    /// The pool's free count to every client that subscribed to it.
    func broadcastConnectionsFree() {
        for client in clients where client.session.wantsConnectionsFree && !client.closeAfterFlush {
            sendConnectionsFree(to: client)
            flush(client)
        }
    }

    private func connectionsFreeBody() -> [UInt8] {
        guard let slots = configuration.activeConnections?.slots else { return ESPHomeServerMessage.connectionsFree() }
        return ESPHomeServerMessage.connectionsFree(
            free: slots.free, limit: slots.limit, allocated: slots.devices.map(\.rawValue))
    }

    /// The client is going: every connection it opened is closed (their slots free as they end).
    func closeConnections(of client: Client) {
        apply(client.table.closeAll(), for: client)
    }
}
