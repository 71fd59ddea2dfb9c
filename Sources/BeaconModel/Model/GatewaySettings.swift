/// Who this gateway is: the `gateway:` section.
public struct GatewaySettings: Sendable, Equatable {
    /// Stable identifier, used in MQTT topics and Home Assistant unique ids. Letters, digits, `_` and `-`.
    public var id: String
    /// Human-readable name (Home Assistant device name); defaults to the id.
    public var name: String
    /// The room the gateway is in (ESPresense room topic level); nil when not set.
    public var room: String?

    public init(id: String, name: String? = nil, room: String? = nil) {
        self.id = id
        self.name = name ?? id
        self.room = room
    }

    /// A valid gateway id derived from a host name: the first label, lower-cased, other characters
    /// replaced by `-`; `beaconbridge` when nothing usable is left.
    public static func identifier(fromHostname hostname: String) -> String {
        let label = hostname.split(separator: ".").first.map(String.init) ?? ""
        let mapped = String(label.lowercased().map { isIdentifierCharacter($0) ? $0 : "-" }.prefix(64))
        return mapped.isEmpty || mapped.allSatisfy({ $0 == "-" }) ? "beaconbridge" : mapped
    }

    /// Whether `text` can be an id or room: 1-64 of `a-z A-Z 0-9 _ -` (safe as an MQTT topic level and in
    /// Home Assistant ids).
    public static func isValidIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy(isIdentifierCharacter)
    }

    static func isIdentifierCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "-")
    }
}
