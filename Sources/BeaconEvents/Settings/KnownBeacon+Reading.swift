import BeaconConfigReading
import BeaconFormats
import BeaconModel

extension KnownBeacon {
    /// One element of `beacons:`: `id` (required) and `name`. Ids of built-in formats must be written exactly
    /// as events carry them (docs/beacon-ids.md): a UUID in upper case would never match, silently.
    public init(from r: inout ConfigReader) {
        let id = r.requiredString("id") ?? ""
        self.init(id: id, name: r.string("name"))
        if let problem = KnownBeacon.canonicalProblem(id) { r.issue(problem, key: "id") }
    }

    /// Why `id` is not the canonical id of its built-in format, with the canonical spelling when there is one.
    static func canonicalProblem(_ id: String) -> String? {
        let parts = id.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let format = parts.first.flatMap(FormatRegistry.format(named:)) else {
            return parts.first == "mac" ? addressProblem(id, parts: parts, shape: "mac:AA:BB:CC:DD:EE:FF") : nil
        }
        let rest = Array(parts.dropFirst())
        switch format.idShape {
        case .uuidMajorMinor:
            let shape = "\(format.name):<uuid>:<0-65535>:<0-65535>"
            guard rest.count == 3, let uuid = try? ConfigUUID.decodeConfig(ConfigScalar(rest[0])),
                let major = UInt16(rest[1]), let minor = UInt16(rest[2])
            else {
                return "`\(format.name)` ids look like \(shape)"
            }
            return suggest(id, "\(format.name):\(uuid.text):\(major):\(minor)")
        case let .hex(lengths):
            let shape = ([format.name] + lengths.map { "<\($0 * 2) hex>" }).joined(separator: ":")
            return hexProblem(id, format: format, rest: rest, lengths: lengths, shape: shape)
        case .address:
            return addressProblem(id, parts: parts, shape: "\(format.name):AA:BB:CC:DD:EE:FF")
        }
    }

    private static func suggest(_ id: String, _ canonical: String) -> String? {
        id == canonical ? nil : "ids are written as events carry them: did you mean `\(canonical)`?"
    }

    private static func hexProblem(
        _ id: String, format: BeaconFormat, rest: [String], lengths: [Int],
        shape: String
    ) -> String? {
        let bytes = rest.map { HexBytes.parse($0) }
        guard bytes.count == lengths.count, zip(bytes, lengths).allSatisfy({ $0?.count == $1 }) else {
            return "`\(format.name)` ids look like \(shape)"
        }
        let canonical = ([format.name] + bytes.map { String(HexBytes($0!).description.dropFirst(2)) })
            .joined(separator: ":")
        return suggest(id, canonical)
    }

    private static func addressProblem(_ id: String, parts: [String], shape: String) -> String? {
        let address = parts.dropFirst().joined(separator: ":")
        guard let parsed = BluetoothAddress(string: address) else { return "ids look like \(shape)" }
        return suggest(id, parts[0] + ":" + parsed.description)
    }
}
