import BeaconConfigReading
import BeaconModel

/// Which beacon formats the gateway recognises (YAML section `formats`, see docs/decoding.md).
public struct FormatSettings: Sendable, Equatable {
    /// A user format: a name (its format name and beacon-id prefix) and a layout in the ABL grammar.
    public struct Layout: Sendable, Equatable {
        public var name: String
        public var layout: String
        public init(name: String, layout: String) {
            self.name = name
            self.layout = layout
        }
    }

    /// `formats.enabled`: names of the built-in formats to recognise (default: all).
    public var enabled: [String]
    /// `formats.layouts`: user formats, tried before the built-ins (default: none).
    public var layouts: [Layout]
    /// `formats.include_devices`: also report advertisers that match no format, as `device` sightings with
    /// id `mac:<address>` (default: false; phones with rotating addresses make many of them).
    public var includeDevices: Bool
    /// `formats.bthome_keys`: BTHome v2 bind keys per device (default: none).
    public var bthomeKeys: [BTHomeKey] = []

    public init(
        enabled: [String] = FormatRegistry.names, layouts: [Layout] = [],
        includeDevices: Bool = false
    ) {
        self.enabled = enabled
        self.layouts = layouts
        self.includeDevices = includeDevices
    }

    /// The enabled built-ins that exist (unknown names are reported by `validate()`).
    public var enabledBuiltins: [BeaconFormat] { FormatRegistry.builtins.filter { enabled.contains($0.name) } }

    /// Every problem at once: unknown built-in names, bad or duplicate layout names, invalid layouts.
    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        let builtinNames = FormatRegistry.names
        for (index, name) in enabled.enumerated() where !builtinNames.contains(name) {
            issues.append(
                ConfigIssue(
                    path: "formats.enabled[\(index)]",
                    message: "unknown format '\(name)' (known: \(builtinNames.joined(separator: ", ")))"))
        }
        var seen: Set<String> = []
        for (index, entry) in layouts.enumerated() {
            let path = "formats.layouts[\(index)]"
            if let problem = Self.layoutNameProblem(entry.name) {
                issues.append(ConfigIssue(path: path + ".name", message: problem))
            } else if builtinNames.contains(entry.name) || entry.name == "device" || entry.name == "mac" {
                issues.append(ConfigIssue(path: path + ".name", message: "'\(entry.name)' is a built-in format name"))
            } else if !seen.insert(entry.name).inserted {
                issues.append(ConfigIssue(path: path + ".name", message: "duplicate layout name '\(entry.name)'"))
            }
            do {
                _ = try BeaconLayout(name: entry.name, layout: entry.layout)
            } catch {
                issues.append(ConfigIssue(path: path + ".layout", message: "invalid layout: \(error)"))
            }
        }
        return issues + bthomeKeyIssues()
    }

    /// The loaded bind keys, for the decoder (keys that failed to load are configuration problems already).
    public var sensorKeys: SensorKeys {
        var keys = SensorKeys()
        for entry in bthomeKeys {
            if let key = entry.key, let address = BluetoothAddress(string: entry.address) {
                keys.addBTHomeKey(key.bytes, for: address)
            }
        }
        return keys
    }

    /// Problems of `bthome_keys`: addresses, sources, duplicates.
    func bthomeKeyIssues() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        var seen: Set<BluetoothAddress> = []
        for (index, entry) in bthomeKeys.enumerated() {
            let path = "formats.bthome_keys[\(index)]"
            if let address = BluetoothAddress(string: entry.address) {
                if !seen.insert(address).inserted {
                    issues.append(ConfigIssue(path: path + ".address", message: "a second key for \(address)"))
                }
            } else {
                issues.append(
                    ConfigIssue(
                        path: path + ".address", message: "`\(entry.address)` is not a MAC address (AA:BB:CC:DD:EE:FF)")
                )
            }
        }
        return issues
    }

    /// Layout names become beacon-id prefixes and MQTT topic parts: lower-case letters, digits, '-' and '_'.
    public static func layoutNameProblem(_ name: String) -> String? {
        guard !name.isEmpty else { return "a layout needs a name" }
        guard name.utf8.count <= 32 else { return "name longer than 32 characters" }
        let allowed = name.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F
        }
        return allowed ? nil : "name '\(name)' may only hold lower-case letters, digits, '-' and '_'"
    }
}
