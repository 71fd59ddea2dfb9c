import BeaconModel
import BeaconRuntime
import DeviceProtocols
import GATTLink
import Synchronization

/// One active connection of the proxy: a thread of its own that takes a slot of the daemon's pool, connects,
/// then runs the client's GATT operations one at a time and listens for notifications between them (waking every
/// `idleWait` seconds to look for work). Everything it learns goes back to the server thread through `post` (the
/// server's inbox and wake-up pipe); the server thread never waits for a device.
///
/// Bounds: at most `ESPHomeConnectionTable.Limits.pendingPerConnection` operations queued (the table refuses
/// more), at most `ActiveConnections.notificationLimit` notifications handed over and not yet taken by the server (more are dropped
/// and counted). The connect is bounded by `connectTimeout`, each operation by the ATT request timeout.
///
/// `Sendable`: the queue is behind a mutex; the `GATTConnection` lives on the link's thread only.
final class ESPHomeDeviceLink: Sendable {
    private struct Queue {
        var operations: [ESPHomeConnectionTable.Operation] = []
        var closing = false
    }

    let clientID: Int
    let address: UInt64
    private let random: Bool
    private let settings: ESPHomeProxyServer.ActiveConnections
    private let queue = Mutex(Queue())
    private let post: @Sendable (ESPHomeDeviceLink, ESPHomeConnectionTable.Report) -> Void
    /// Notifications posted and not yet taken by the server (it calls `notificationTaken`).
    let notificationsQueued = Atomic<Int>(0)
    let notificationsDropped = Atomic<UInt64>(0)

    init(
        clientID: Int, address: UInt64, random: Bool, settings: ESPHomeProxyServer.ActiveConnections,
        post: @escaping @Sendable (ESPHomeDeviceLink, ESPHomeConnectionTable.Report) -> Void
    ) {
        self.clientID = clientID
        self.address = address
        self.random = random
        self.settings = settings
        self.post = post
    }

    /// Starts the thread; false when no thread could be started (the caller reports the connection ended).
    func start() -> Bool {
        DedicatedThread.start(name: "bb-esph-gatt") { [self] in run() } == 0
    }

    func submit(_ operation: ESPHomeConnectionTable.Operation) {
        queue.withLock { $0.operations.append(operation) }
    }

    /// Ends the connection after the running operation (a connect in progress ends when it returns).
    func close() {
        queue.withLock { $0.closing = true }
    }

    func notificationTaken() {
        notificationsQueued.subtract(1, ordering: .relaxed)
    }

    private enum Next {
        case operation(ESPHomeConnectionTable.Operation)
        case close, idle
    }

    private func next() -> Next {
        queue.withLock { queue in
            if queue.closing { return .close }
            if queue.operations.isEmpty { return .idle }
            return .operation(queue.operations.removeFirst())
        }
    }

    private var hasWork: Bool { queue.withLock { $0.closing || !$0.operations.isEmpty } }

    private func run() {
        let device = BluetoothAddress(rawValue: address)
        let connection: GATTConnection
        do {
            if let open = settings.open {
                connection = try open(device, random)
            } else {
                connection = try GATTConnection.open(
                    adapter: settings.adapter, peer: device, randomAddress: random, timeout: settings.connectTimeout,
                    slots: settings.slots, requestTimeout: settings.requestTimeout)
            }
        } catch {
            post(self, .ended(error: Self.connectError(error)))
            return
        }
        if case .close = next() {
            connection.close()
            post(self, .ended(error: 0))
            return
        }
        post(self, .connected(mtu: UInt16(clamping: connection.client.mtu)))
        connection.onNotification = { [self] notification in
            guard notificationsQueued.load(ordering: .relaxed) < settings.notificationLimit else {
                notificationsDropped.add(1, ordering: .relaxed)
                return
            }
            notificationsQueued.add(1, ordering: .relaxed)
            post(self, .notification(handle: notification.handle, notification.value))
        }
        var endError: Int32 = 0
        loop: while true {
            switch next() {
            case .close:
                break loop
            case .operation(let operation):
                let report = perform(operation, on: connection)
                post(self, report)
                if connection.isClosed {
                    endError = ESPHomeBluetoothError.terminatedByDevice
                    break loop
                }
            case .idle:
                do {
                    try connection.waitForNotifications(until: SystemClock.monotonic() + settings.idleWait) {
                        hasWork
                    }
                } catch {
                    endError = ESPHomeBluetoothError.terminatedByDevice
                    break loop
                }
            }
        }
        connection.onNotification = nil
        connection.close()
        post(self, .ended(error: endError))
    }

    private func perform(_ operation: ESPHomeConnectionTable.Operation, on connection: GATTConnection)
        -> ESPHomeConnectionTable.Report
    {
        do throws(GATTLinkError) {
            switch operation {
            case .services:
                var listings: [ESPHomeServiceListing] = []
                for (service, characteristics) in try connection.discoverAll() {
                    var entries: [ESPHomeServiceListing.Characteristic] = []
                    for characteristic in characteristics {
                        var descriptors: [GATTDescriptor] = []
                        if characteristic.endHandle > characteristic.valueHandle,
                            case .descriptors(let found) = try connection.perform(
                                .discoverDescriptors(characteristic))
                        {
                            descriptors = found
                        }
                        entries.append(.init(characteristic, descriptors: descriptors))
                    }
                    listings.append(ESPHomeServiceListing(service, characteristics: entries))
                }
                return .services(listings)
            case let .read(handle), let .readDescriptor(handle):
                guard case .value(let value) = try connection.perform(.read(handle: handle)) else {
                    return .failed(handle: handle, error: ESPHomeBluetoothError.notAvailable)
                }
                return .value(handle: handle, value)
            case let .write(handle, value, withResponse):
                if withResponse {
                    try connection.perform(.write(handle: handle, value: value))
                    return .written(handle: handle)
                }
                try connection.perform(.writeWithoutResponse(handle: handle, value: value))
                return .sent(handle: handle)
            case let .writeDescriptor(handle, value):
                try connection.perform(.write(handle: handle, value: value))
                return .written(handle: handle)
            }
        } catch {
            return .failed(handle: operation.handle, error: Self.operationError(error))
        }
    }

    /// The error number of a failed connect, as ESP-IDF's (aioesphomeapi names them to the user).
    static func connectError(_ error: GATTLinkError) -> Int32 {
        switch error.kind {
        case .noSlot, .alreadyConnected: return ESPHomeBluetoothError.noResources
        case .connectTimeout: return ESPHomeBluetoothError.connectTimeout
        case .disconnected: return ESPHomeBluetoothError.terminatedByDevice
        default: return ESPHomeBluetoothError.failedToEstablish
        }
    }

    /// The error number of a failed operation: the device's ATT error code where it gave one.
    static func operationError(_ error: GATTLinkError) -> Int32 {
        guard case .gatt(let gatt) = error.kind else {
            if case .disconnected = error.kind { return ESPHomeBluetoothError.terminatedByDevice }
            return ESPHomeBluetoothError.notAvailable
        }
        switch gatt {
        case let .refused(_, code, _), let .insufficientAuthentication(_, code), let .insufficientEncryption(_, code):
            return Int32(code.rawValue)
        case .notFound:
            return Int32(ATTErrorCode.invalidHandle.rawValue)
        case .disconnected: return ESPHomeBluetoothError.terminatedByDevice
        case .valueTooLong: return Int32(ATTErrorCode.invalidAttributeValueLength.rawValue)
        case .timeout, .malformedResponse: return ESPHomeBluetoothError.notAvailable
        }
    }
}
