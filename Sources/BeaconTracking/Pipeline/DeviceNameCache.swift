import BeaconModel

/// Remembers the local name each device advertised, so a beacon heard in a scan response (or in an
/// advertising PDU without a name) carries the name the same device sent in its other PDU. Bounded: the
/// least recently written entry goes when `capacity` is reached.
struct DeviceNameCache: Sendable {
    private var names: [BluetoothAddress: (name: String, stamp: UInt64)] = [:]
    private var clock: UInt64 = 0
    package let capacity: Int

    package init(capacity: Int) { self.capacity = max(1, capacity) }

    package var count: Int { names.count }

    package mutating func remember(_ name: String, for address: BluetoothAddress) {
        clock &+= 1
        if names[address] == nil, names.count >= capacity,
            let oldest = names.min(by: { $0.value.stamp < $1.value.stamp })
        {
            names.removeValue(forKey: oldest.key)
        }
        names[address] = (name, clock)
    }

    package func name(for address: BluetoothAddress) -> String? { names[address]?.name }
}
