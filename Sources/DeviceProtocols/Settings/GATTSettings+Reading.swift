import BeaconConfigReading
import BeaconModel

extension GATTSettings {
    /// The `gatt:` section. Ranges are checked here; names and duplicates by `validate()`.
    public init(from r: inout ConfigReader) {
        let defaults = GATTSettings()
        self.init(
            enabled: r.bool("enabled", default: defaults.enabled),
            slots: r.int("slots", default: defaults.slots, in: 1...3),
            connectTimeout: r.duration("connect_timeout_s", default: defaults.connectTimeout, in: 1...60),
            requestTimeout: r.duration("request_timeout_s", default: defaults.requestTimeout, in: 1...30))
        allowedDevices = r.list("allowed_devices", of: BluetoothAddress.self)
        devices = r.list("devices") { Device(from: &$0) }
    }
}

extension GATTSettings.Device {
    package init(from r: inout ConfigReader) {
        let address = r.required("address", as: BluetoothAddress.self)
        let name = r.requiredString("name") ?? ""
        if !name.isEmpty, !GatewaySettings.isValidIdentifier(name) {
            r.issue("`\(name)` is not a valid name (1-64 letters, digits, `_` or `-`)", key: "name")
        }
        self.init(
            address: address ?? BluetoothAddress(rawValue: 0), random: r.bool("random", default: false),
            name: name, interval: r.duration("interval_s", default: 3600, in: 60...604_800),
            firmware: r.string("firmware"))
        if r.has("read") {
            var chosen: [GATTSettings.InfoField] = []
            for word in r.list("read", of: String.self) {
                if let field = GATTSettings.InfoField(rawValue: word) {
                    if !chosen.contains(field) { chosen.append(field) }
                } else {
                    r.issue("`\(word)` is not one of firmware, hardware, battery", key: "read")
                }
            }
            read = chosen
        } else {
            r.declare(["read"])
        }
    }
}

extension BluetoothAddress: ConfigScalarValue {
    public static var configTypeDescription: String { "a device address AA:BB:CC:DD:EE:FF" }

    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> BluetoothAddress {
        guard let address = BluetoothAddress(string: scalar.text) else {
            throw ConfigValueError("`\(scalar.text)` is not a device address AA:BB:CC:DD:EE:FF")
        }
        return address
    }
}
