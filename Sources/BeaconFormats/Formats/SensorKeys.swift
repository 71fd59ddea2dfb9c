import BeaconModel

/// Decryption keys of sensor formats, per device (the core never reads them: the caller loads them from files or
/// the environment and hands them over). Never logged, never part of any output.
public struct SensorKeys: Sendable {
    /// BTHome v2 bind keys (AES-128), expanded once, by the device's address (the address the frames carry
    /// when they include one, else the sender's).
    public private(set) var bthome: [BluetoothAddress: AES128] = [:]

    public init() {}

    /// Adds a 16-byte BTHome bind key; false when the key is not 16 bytes.
    @discardableResult
    public mutating func addBTHomeKey(_ key: [UInt8], for address: BluetoothAddress) -> Bool {
        guard key.count == 16, let cipher = AES128(key: key) else { return false }
        bthome[address] = cipher
        return true
    }

    public var isEmpty: Bool { bthome.isEmpty }
}

extension SensorKeys: CustomStringConvertible {
    /// Counts only: keys never appear in logs or output.
    public var description: String { "SensorKeys(bthome: \(bthome.count) device(s))" }
}
