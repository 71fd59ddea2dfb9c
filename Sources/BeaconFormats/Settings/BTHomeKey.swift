import BeaconConfigReading

/// One BTHome v2 bind key (`formats.bthome_keys[]`): the device's address and where its 16-byte AES key comes from.
/// The key itself is loaded by the configuration loader (YAMLConfig's `BindKeyLoader`) from a file or the
/// environment, never from the configuration file or argv, and is never printed.
public struct BTHomeKey: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// `key_file`: a file holding 32 hex digits (surrounding white space ignored).
        case file(String)
        /// `key_env`: an environment variable holding them.
        case environment(String)

        public var key: String {
            switch self {
            case .file: "key_file"
            case .environment: "key_env"
            }
        }
    }

    /// `address`: the device's MAC (the address its frames carry or are sent from), as written.
    public var address: String
    public var source: Source?
    /// The loaded key; nil until loaded (or when loading failed, which is a configuration problem).
    public var key: SecretBytes?

    public init(address: String, source: Source?, key: SecretBytes? = nil) {
        self.address = address
        self.source = source
        self.key = key
    }

    /// 32 hex digits (white space anywhere, a `0x` prefix and `:`/`-` between bytes allowed) -> 16 bytes.
    public static func parse(_ text: String) -> [UInt8]? {
        guard let bytes = HexBytes.parse(String(text.filter { !$0.isWhitespace })), bytes.count == 16 else {
            return nil
        }
        return bytes
    }
}

/// Key material that never shows itself: descriptions, debug output and dumps print `<redacted>`.
public struct SecretBytes: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
