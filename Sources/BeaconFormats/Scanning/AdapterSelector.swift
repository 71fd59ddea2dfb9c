import BeaconModel

/// How the configuration names a Bluetooth adapter. Never "whichever the kernel picks": the kernel's default
/// route is the newest controller, not the one the user means.
public enum AdapterSelector: Sendable, Equatable, CustomStringConvertible {
    /// Adapter index, `hci<N>` or `<N>`.
    case index(Int)
    /// The controller with this address.
    case address(BluetoothAddress)

    /// Parses `hci0`, `0` or `AA:BB:CC:DD:EE:FF`; nil otherwise.
    public init?(configValue: String) {
        let text = configValue
        if let address = BluetoothAddress(string: text) {
            self = .address(address)
            return
        }
        let digits = text.hasPrefix("hci") ? String(text.dropFirst(3)) : text
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let index = Int(digits), index < 0xFFFF
        else { return nil }
        self = .index(index)
    }

    public var description: String {
        switch self {
        case let .index(index): "hci\(index)"
        case let .address(address): address.description
        }
    }
}
