import BeaconModel

/// What the gateway remembers about a configured device's key once it resolved an address (state database
/// table `device_keys`): the byte order that matched and when the device was last heard. Never the key: the
/// fingerprint tells whether the configured key is still the one that matched.
public struct SeenDeviceKey: Sendable, Equatable {
    public var name: String
    public var fingerprint: String
    public var order: KeyByteOrder
    /// Capture time the device was last heard (seconds since the Unix epoch).
    public var lastSeen: Timestamp

    public init(name: String, fingerprint: String, order: KeyByteOrder, lastSeen: Timestamp) {
        self.name = name
        self.fingerprint = fingerprint
        self.order = order
        self.lastSeen = lastSeen
    }

    /// Learned orders by device name, for those rows whose fingerprint is that of the configured key.
    public static func learnedOrders(_ rows: [SeenDeviceKey], for settings: PrivateDeviceSettings) -> [String:
        KeyByteOrder]
    {
        var out: [String: KeyByteOrder] = [:]
        for device in settings.known {
            guard let key = device.key, let row = rows.first(where: { $0.name == device.name }),
                row.fingerprint == key.fingerprint
            else { continue }
            out[device.name] = row.order
        }
        return out
    }
}
