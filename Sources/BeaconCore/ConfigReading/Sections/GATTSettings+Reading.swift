extension GATTSettings {
    /// The `gatt:` section. Ranges are checked here; names and duplicates by `validate()`.
    public init(from r: inout ConfigReader) {
        let defaults = GATTSettings()
        self.init(
            enabled: r.bool("enabled", default: defaults.enabled),
            slots: r.int("slots", default: defaults.slots, in: 1...3),
            connectTimeout: r.duration("connect_timeout_s", default: defaults.connectTimeout, in: 1...60),
            requestTimeout: r.duration("request_timeout_s", default: defaults.requestTimeout, in: 1...30))
        allowedDevices = r.addressList("allowed_devices")
        devices = r.list("devices") { Device(from: &$0) }
    }
}

extension GATTSettings.Device {
    init(from r: inout ConfigReader) {
        let address = r.value("address", expecting: "a device address AA:BB:CC:DD:EE:FF") {
            BluetoothAddress(string: $0)
        }
        if address == nil, !r.has("address") { r.issue("is required", key: "address") }
        let name = r.requiredString("name") ?? ""
        if !name.isEmpty, !GatewaySettings.isValidIdentifier(name) {
            r.issue("`\(name)` is not a valid name (1-64 letters, digits, `_` or `-`)", key: "name")
        }
        self.init(
            address: address ?? BluetoothAddress(rawValue: 0), random: r.bool("random", default: false),
            name: name, interval: r.duration("interval_s", default: 3600, in: 60...604_800))
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

extension ConfigReader {
    /// A list of device addresses; each bad one is reported with its index.
    mutating func addressList(_ key: String) -> [BluetoothAddress] {
        var out: [BluetoothAddress] = []
        for (index, text) in list(key, of: String.self).enumerated() {
            if let address = BluetoothAddress(string: text) {
                out.append(address)
            } else {
                issue("`\(text)` is not a device address AA:BB:CC:DD:EE:FF", key: "\(key)[\(index)]")
            }
        }
        return out
    }
}
