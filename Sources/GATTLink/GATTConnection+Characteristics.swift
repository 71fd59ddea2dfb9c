import BeaconFormats
import BeaconModel
import DeviceProtocols
import HCIScanner

extension GATTConnection {
    /// The default LE connect timeout (the seed's update flow: connect to the target with a 20 s timeout).
    public static let defaultConnectTimeout: Double = 20

    /// Takes a slot, resolves the adapter (bringing it up if it is down and that is permitted), turns LE on
    /// through mgmt when it is off (`ManagementSocket`: without bluetoothd nobody else does, and the kernel
    /// refuses the connect), connects to `peer` on the ATT channel within `timeout` seconds and exchanges the MTU.
    /// The slot is freed on every failure and when the connection closes. `notice` gets what was changed.
    public static func open(
        adapter selector: AdapterSelector, peer: BluetoothAddress, randomAddress: Bool = false,
        timeout: Double = defaultConnectTimeout, slots: ConnectionSlots,
        requestTimeout: Double = GATTClient.defaultRequestTimeout, notice: (String) -> Void = { _ in }
    ) throws(GATTLinkError) -> GATTConnection {
        let slot = try slots.acquire(for: peer)
        let adapter: HCIAdapter
        do {
            adapter = try HCIAdapter.resolve(selector)
            if !adapter.isUp { try HCIAdapter.up(deviceID: adapter.deviceID, label: adapter.name) }
        } catch {
            throw GATTLinkError(.adapter(error.kind), peer: peer.description, step: error.call, errno: error.errno)
        }
        if try ManagementSocket.ensureLowEnergy(
            index: adapter.deviceID, adapterName: adapter.name, peer: peer.description)
        {
            notice("LE was off on \(adapter.name): turned on through the management interface")
        }
        notice("connecting from \(adapter.name) (\(adapter.address)) to \(peer), at most \(timeout) s")
        let socket = try L2CAPSocket.connect(
            from: adapter.address, adapterName: adapter.name, to: peer, randomAddress: randomAddress,
            timeout: timeout)
        let connection = GATTConnection(socket: socket, slot: slot, requestTimeout: requestTimeout)
        do {
            try connection.perform(.exchangeMTU)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Every primary service with its characteristics (discovered once, then kept).
    public func discoverAll() throws(GATTLinkError) -> [(GATTService, [GATTCharacteristic])] {
        var all: [(GATTService, [GATTCharacteristic])] = []
        for service in try primaryServices() { all.append((service, try characteristics(of: service))) }
        return all
    }

    /// The first characteristic of this UUID (in any primary service); `.notFound` when there is none.
    public func characteristic(_ uuid: GATTUUID) throws(GATTLinkError) -> GATTCharacteristic {
        for service in try primaryServices() {
            if let found = try characteristics(of: service).first(where: { $0.uuid == uuid }) { return found }
        }
        throw GATTLinkError(.notFound(uuid), peer: peer, step: "find \(uuid)")
    }

    /// Reads the value of the characteristic of this UUID.
    public func read(_ uuid: GATTUUID) throws(GATTLinkError) -> [UInt8] {
        let found = try characteristic(uuid)
        guard case .value(let value) = try perform(.read(handle: found.valueHandle), step: "read \(uuid)") else {
            throw GATTLinkError(.gatt(.malformedResponse(.read, reason: "no value")), peer: peer, step: "read \(uuid)")
        }
        return value
    }

    /// Writes `value` to the characteristic of this UUID, with a Write Request (acknowledged) or a Write Command.
    public func write(_ uuid: GATTUUID, value: [UInt8], withResponse: Bool = true) throws(GATTLinkError) {
        let found = try characteristic(uuid)
        let procedure: GATTProcedure =
            withResponse
            ? .write(handle: found.valueHandle, value: value)
            : .writeWithoutResponse(handle: found.valueHandle, value: value)
        try perform(procedure, step: "write \(uuid)")
    }

    /// Turns notifications (or indications) of the characteristic of this UUID on through its CCCD; returns the
    /// characteristic so the caller can match notifications by its value handle.
    @discardableResult
    public func subscribe(_ uuid: GATTUUID, indications: Bool = false) throws(GATTLinkError) -> GATTCharacteristic {
        let found = try characteristic(uuid)
        let step = "subscribe \(uuid)"
        guard case .descriptors(let descriptors) = try perform(.discoverDescriptors(found), step: step),
            let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration })
        else { throw GATTLinkError(.notFound(.clientCharacteristicConfiguration), peer: peer, step: step) }
        try perform(.subscribe(cccd: cccd.handle, indications ? .indications : .notifications), step: step)
        return found
    }

    private func primaryServices() throws(GATTLinkError) -> [GATTService] {
        if let services { return services }
        guard case .services(let found) = try perform(.discoverPrimaryServices) else { return [] }
        services = found
        return found
    }

    private func characteristics(of service: GATTService) throws(GATTLinkError) -> [GATTCharacteristic] {
        if let known = characteristicsByService[service] { return known }
        guard case .characteristics(let found) = try perform(.discoverCharacteristics(service)) else { return [] }
        characteristicsByService[service] = found
        return found
    }
}
