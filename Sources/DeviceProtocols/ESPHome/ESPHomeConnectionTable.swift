/// The devices one API client has connected to through the proxy (active connections), as a state machine without
/// I/O: the server feeds the client's requests (`request`) and what the connections report (`report`), and
/// performs the returned actions (answer the client, open or close a connection, run a GATT operation on one,
/// tell subscribers the free slot count). Every request is checked here: an address this client holds no
/// connection to, a connection still being made, too many operations waiting, each gets the error answer the
/// client waits for, never an operation on a device.
///
/// Like ESPHome's proxies with remote caching, the proxy keeps no service cache: a client that connects "with
/// cache" simply does not ask for the services, and notifications are forwarded for the characteristics the client
/// asked for (`BluetoothGATTNotifyRequest`), the client writing the CCCD itself (as Home Assistant does).
public struct ESPHomeConnectionTable: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Connections one client may hold or be making at a time (the daemon's slots bound all clients together).
        public var connectionsPerClient: Int
        /// GATT operations waiting or running on one connection; more are answered with `noResources`.
        public var pendingPerConnection: Int

        public init(connectionsPerClient: Int = 3, pendingPerConnection: Int = 16) {
            self.connectionsPerClient = max(1, connectionsPerClient)
            self.pendingPerConnection = max(1, pendingPerConnection)
        }
    }

    /// A GATT operation on a held connection.
    public enum Operation: Sendable, Equatable {
        case services
        case read(handle: UInt16)
        case readDescriptor(handle: UInt16)
        case write(handle: UInt16, value: [UInt8], withResponse: Bool)
        case writeDescriptor(handle: UInt16, value: [UInt8])

        /// The handle the answer carries (0 for the services).
        public var handle: UInt16 {
            switch self {
            case .services: return 0
            case let .read(handle), let .readDescriptor(handle), let .write(handle, _, _),
                let .writeDescriptor(handle, _):
                return handle
            }
        }

        /// Whether the client waits for an answer on success (a write without response does not).
        public var answersOnSuccess: Bool {
            if case let .write(_, _, withResponse) = self { return withResponse }
            return true
        }
    }

    /// What a connection reports back.
    public enum Report: Sendable, Equatable {
        /// The link is up, with the ATT MTU.
        case connected(mtu: UInt16)
        /// The connection is gone (or was never made) and its slot is free; `error` 0 for a requested disconnect.
        case ended(error: Int32)
        case services([ESPHomeServiceListing])
        case value(handle: UInt16, [UInt8])
        case written(handle: UInt16)
        /// A write without response went out (nothing to answer; the operation no longer counts as pending).
        case sent(handle: UInt16)
        /// An operation failed: the ATT error code where the device gave one, else the proxy's.
        case failed(handle: UInt16, error: Int32)
        case notification(handle: UInt16, [UInt8])
    }

    public enum Action: Sendable, Equatable {
        case reply(type: UInt32, body: [UInt8])
        /// Tell every client that subscribed the slot count of the daemon's pool.
        case connectionsFree
        /// Open a connection (`random`: the device's address is random).
        case open(address: UInt64, random: Bool)
        /// End this connection (a connect in progress ends when it returns); it reports `ended` when done.
        case close(address: UInt64)
        case perform(address: UInt64, Operation)
    }

    package enum Phase: Equatable {
        case connecting
        case connected(mtu: UInt16)
        case disconnecting
    }
    package struct Entry: Equatable {
        package var phase: Phase
        package var pending = 0
        var notifying: Set<UInt16> = []
    }

    public let limits: Limits
    private(set) var entries: [UInt64: Entry] = [:]

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The addresses this client holds or is connecting to.
    public var addresses: [UInt64] { entries.keys.sorted() }

    public var isEmpty: Bool { entries.isEmpty }

    /// One request of the client.
    public mutating func request(_ request: ESPHomeConnectionRequest) -> [Action] {
        switch request {
        case let .device(address, kind, addressType):
            return device(address: address, kind: kind, addressType: addressType)
        case let .getServices(address):
            return perform(.services, on: address)
        case let .read(address, handle):
            return perform(.read(handle: UInt16(handle)), on: address)
        case let .readDescriptor(address, handle):
            return perform(.readDescriptor(handle: UInt16(handle)), on: address)
        case let .write(address, handle, withResponse, data):
            return perform(.write(handle: UInt16(handle), value: data, withResponse: withResponse), on: address)
        case let .writeDescriptor(address, handle, data):
            return perform(.writeDescriptor(handle: UInt16(handle), value: data), on: address)
        case let .notify(address, handle, enable):
            let short = UInt16(handle)
            guard var entry = entries[address], case .connected = entry.phase else {
                return [Self.gattError(address, short, ESPHomeBluetoothError.notConnected)]
            }
            if enable { entry.notifying.insert(short) } else { entry.notifying.remove(short) }
            entries[address] = entry
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothGATTNotifyResponse,
                    body: ESPHomeServerMessage.handleDone(address: address, handle: short))
            ]
        }
    }

    /// What a connection of this client reported. Reports for an address the table no longer holds (the client
    /// disconnected it meanwhile) produce nothing but the slot update of an `ended`.
    public mutating func report(_ report: Report, from address: UInt64) -> [Action] {
        guard var entry = entries[address] else {
            if case .ended = report { return [.connectionsFree] }
            return []
        }
        switch report {
        case let .connected(mtu):
            guard entry.phase == .connecting else { return [.close(address: address)] }
            entry.phase = .connected(mtu: mtu)
            entries[address] = entry
            return [Self.connection(address, connected: true, mtu: mtu, error: 0), .connectionsFree]
        case let .ended(error):
            entries[address] = nil
            let requested = entry.phase == .disconnecting
            return [Self.connection(address, connected: false, mtu: 0, error: requested ? 0 : error), .connectionsFree]
        case let .notification(handle, value):
            guard entry.notifying.contains(handle) else { return [] }
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothGATTNotifyDataResponse,
                    body: ESPHomeServerMessage.handleData(address: address, handle: handle, data: value))
            ]
        case let .services(listings):
            entry.pending = max(0, entry.pending - 1)
            entries[address] = entry
            var actions: [Action] = listings.map {
                .reply(
                    type: ESPHomeMessageType.bluetoothGATTGetServicesResponse,
                    body: ESPHomeServerMessage.services(address: address, [$0]))
            }
            actions.append(
                .reply(
                    type: ESPHomeMessageType.bluetoothGATTGetServicesDoneResponse,
                    body: ESPHomeServerMessage.servicesDone(address: address)))
            return actions
        case let .value(handle, value):
            entry.pending = max(0, entry.pending - 1)
            entries[address] = entry
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothGATTReadResponse,
                    body: ESPHomeServerMessage.handleData(address: address, handle: handle, data: value))
            ]
        case let .written(handle):
            entry.pending = max(0, entry.pending - 1)
            entries[address] = entry
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothGATTWriteResponse,
                    body: ESPHomeServerMessage.handleDone(address: address, handle: handle))
            ]
        case .sent:
            entry.pending = max(0, entry.pending - 1)
            entries[address] = entry
            return []
        case let .failed(handle, error):
            entry.pending = max(0, entry.pending - 1)
            entries[address] = entry
            return [Self.gattError(address, handle, error)]
        }
    }

    /// The client is gone: every connection it holds or is making is closed (their `ended` reports then only
    /// update the slot count).
    public mutating func closeAll() -> [Action] {
        let actions = addresses.map { Action.close(address: $0) }
        entries.removeAll()
        return actions
    }

    private mutating func device(address: UInt64, kind: ESPHomeDeviceRequestKind, addressType: UInt32?) -> [Action] {
        switch kind {
        case .connectV1, .connectWithCache, .connectWithoutCache:
            if let entry = entries[address] {
                switch entry.phase {
                case let .connected(mtu): return [Self.connection(address, connected: true, mtu: mtu, error: 0)]
                case .connecting: return []
                case .disconnecting:
                    return [
                        Self.connection(address, connected: false, mtu: 0, error: ESPHomeBluetoothError.noResources)
                    ]
                }
            }
            guard entries.count < limits.connectionsPerClient else {
                return [Self.connection(address, connected: false, mtu: 0, error: ESPHomeBluetoothError.noResources)]
            }
            entries[address] = Entry(phase: .connecting)
            return [.open(address: address, random: addressType == 1)]
        case .disconnect:
            guard var entry = entries[address] else {
                return [Self.connection(address, connected: false, mtu: 0, error: 0)]
            }
            guard entry.phase != .disconnecting else { return [] }
            entry.phase = .disconnecting
            entries[address] = entry
            return [.close(address: address)]
        case .pair:
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothDevicePairingResponse,
                    body: ESPHomeServerMessage.pairing(
                        address: address, done: false, error: ESPHomeBluetoothError.notAvailable))
            ]
        case .unpair:
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothDeviceUnpairingResponse,
                    body: ESPHomeServerMessage.pairing(
                        address: address, done: false, error: ESPHomeBluetoothError.notAvailable))
            ]
        case .clearCache:
            // The proxy keeps no service cache: there is nothing to clear, and it says so (no cache-clearing flag).
            return [
                .reply(
                    type: ESPHomeMessageType.bluetoothDeviceClearCacheResponse,
                    body: ESPHomeServerMessage.clearCache(
                        address: address, success: false, error: ESPHomeBluetoothError.notAvailable))
            ]
        case .unknown:
            return [Self.connection(address, connected: false, mtu: 0, error: ESPHomeBluetoothError.notAvailable)]
        }
    }

    private mutating func perform(_ operation: Operation, on address: UInt64) -> [Action] {
        guard var entry = entries[address], case .connected = entry.phase else {
            return [Self.gattError(address, operation.handle, ESPHomeBluetoothError.notConnected)]
        }
        guard entry.pending < limits.pendingPerConnection else {
            return [Self.gattError(address, operation.handle, ESPHomeBluetoothError.noResources)]
        }
        // A write without response is answered only when it fails; it still counts until the connection reports.
        entry.pending += 1
        entries[address] = entry
        return [.perform(address: address, operation)]
    }

    package static func connection(_ address: UInt64, connected: Bool, mtu: UInt16, error: Int32) -> Action {
        .reply(
            type: ESPHomeMessageType.bluetoothDeviceConnectionResponse,
            body: ESPHomeServerMessage.deviceConnection(address: address, connected: connected, mtu: mtu, error: error))
    }

    package static func gattError(_ address: UInt64, _ handle: UInt16, _ error: Int32) -> Action {
        .reply(
            type: ESPHomeMessageType.bluetoothGATTErrorResponse,
            body: ESPHomeServerMessage.gattError(address: address, handle: handle, error: error))
    }
}
