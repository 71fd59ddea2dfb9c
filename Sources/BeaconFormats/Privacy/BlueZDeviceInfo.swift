import BeaconConfigReading

/// What `beaconbridge keys import-bluez` needs from a BlueZ device `info` file
/// (`/var/lib/bluetooth/<adapter>/<device>/info`, an INI-style key file BlueZ writes after pairing): the device's
/// name (`[General] Name=`) and its identity resolving key (`[IdentityResolvingKey] Key=`, 32 hex digits).
public struct BlueZDeviceInfo: Sendable, Equatable {
    public var name: String?
    /// The key's 16 bytes in the order BlueZ writes them; nil when the file has no (well-formed) key.
    public var irk: [UInt8]?

    public init(name: String?, irk: [UInt8]?) {
        self.name = name
        self.irk = irk
    }

    /// Parses the file's text; unknown sections and keys are ignored, a malformed key counts as none.
    public init(parsing text: String) {
        var section = ""
        var name: String?
        var irk: [UInt8]?
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = String(rawLine).trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]).trimmingSpaces
            let value = String(line[line.index(after: equals)...]).trimmingSpaces
            switch (section, key) {
            case ("General", "Name"): name = value.isEmpty ? nil : value
            case ("IdentityResolvingKey", "Key"):
                if value.count == 32, let bytes = HexBytes.parse(value), bytes.count == 16 { irk = bytes }
            default: break
            }
        }
        self.init(name: name, irk: irk)
    }

    /// A device name usable as `devices.known[].name`: lower case letters, digits and `-` from the BlueZ name
    /// (e.g. "Alice's iPhone" -> `alices-iphone`), else `device-<address digits>`.
    public static func deviceName(from name: String?, address: String) -> String {
        var out = ""
        var pendingDash = false
        for character in (name ?? "").lowercased() {
            if character.isASCII && (character.isLetter || character.isNumber) {
                if pendingDash && !out.isEmpty { out.append("-") }
                pendingDash = false
                out.append(character)
            } else if character == "'" || character == "’" {
                continue
            } else {
                pendingDash = true
            }
        }
        if out.isEmpty { out = "device-" + address.lowercased().filter { $0.isHexDigit } }
        return String(out.prefix(64))
    }
}
