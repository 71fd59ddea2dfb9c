import BeaconModel
import Synchronization

/// The connection slots of one adapter: at most `limit` GATT connections at a time (3 by default, as ESPHome's
/// Bluetooth proxies offer), one per device. A slot is a non-copyable `ConnectionSlot` that frees itself when it
/// goes away, so no path (an error, a stalled peer timing out, a thrown connect) can leave one taken.
public final class ConnectionSlots: Sendable {
    public static let defaultLimit = 3

    public let limit: Int
    private let taken = Mutex<[BluetoothAddress]>([])

    public init(limit: Int = ConnectionSlots.defaultLimit) {
        precondition(limit > 0, "at least one slot")
        self.limit = limit
    }

    /// The devices holding a slot now.
    public var devices: [BluetoothAddress] { taken.withLock { $0 } }

    /// How many slots are free.
    public var free: Int { limit - taken.withLock { $0.count } }

    /// Takes a slot for `device`; throws `.noSlot` when all are taken, `.alreadyConnected` when the device
    /// already holds one.
    public func acquire(for device: BluetoothAddress) throws(GATTLinkError) -> ConnectionSlot {
        let refusal: GATTLinkError.Kind? = taken.withLock { devices in
            if devices.contains(device) { return .alreadyConnected }
            if devices.count >= limit { return .noSlot(limit: limit) }
            devices.append(device)
            return nil
        }
        if let refusal { throw GATTLinkError(refusal, peer: device.description, step: "connection slot") }
        return ConnectionSlot(owner: self, device: device)
    }

    fileprivate func release(_ device: BluetoothAddress) {
        taken.withLock { devices in
            if let index = devices.firstIndex(of: device) { devices.remove(at: index) }
        }
    }
}

/// One taken slot; freed when this value is destroyed (end of scope, `nil` assigned, its owner deinitialised).
public struct ConnectionSlot: ~Copyable, Sendable {
    let owner: ConnectionSlots
    public let device: BluetoothAddress

    fileprivate init(owner: ConnectionSlots, device: BluetoothAddress) {
        self.owner = owner
        self.device = device
    }

    deinit { owner.release(device) }
}
