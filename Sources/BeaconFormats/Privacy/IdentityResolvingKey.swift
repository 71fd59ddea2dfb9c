import BeaconConfigReading
import BeaconModel

/// A device's Identity Resolving Key (IRK): 16 bytes that turn a resolvable private address back into the device.
///
/// Written as 32 hex digits (most significant byte first, as ESPresense and Home Assistant show them; an `irk:`
/// prefix and `:`/`-`/space separators are accepted) or as base64 of the 16 bytes (as Home Assistant stores it).
/// Both byte orders occur in the wild, so the key keeps a cipher for the order as written and for its reverse;
/// `PrivateAddressResolver` tries both until one matches and then remembers it.
///
/// The bytes are a secret: `description` shows only the fingerprint, and nothing here prints the key.
public struct IdentityResolvingKey: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The cipher with the key as written (index 0) and byte-reversed (index 1).
    let ciphers: [AES128]
    /// The key as written, for equality only.
    private let bytes: [UInt8]
    /// A short one-way identifier of the key (AES of a fixed block under the key as written, 8 hex digits):
    /// lets logs, the state database and `keys check` tell keys apart without holding them.
    public let fingerprint: String

    /// Nil unless `bytes` has exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16, let written = AES128(key: bytes), let reversed = AES128(key: bytes.reversed())
        else { return nil }
        ciphers = [written, reversed]
        self.bytes = bytes
        let marker = written.encrypt(words: (0x6265_6163, 0x6F6E_6272, 0x6964_6765, 0x2D66_7031))
        fingerprint = IdentityResolvingKey.hex8(marker.0)
    }

    /// Parses the text forms; nil when it is neither 32 hex digits nor base64 of 16 bytes.
    public init?(text: String) {
        guard let bytes = IdentityResolvingKey.parse(text) else { return nil }
        self.init(bytes: bytes)
    }

    public var description: String { "IRK(\(fingerprint))" }

    /// `dump()` and debuggers show the fingerprint only.
    public var customMirror: Mirror { Mirror(self, children: ["fingerprint": fingerprint]) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }

    /// `ah(k, r)`: the 24-bit hash of a 24-bit `prand` under this key in `order` (Core specification Vol 3
    /// Part H 2.2.2: AES-128 of the zero-padded prand, the low 24 bits of the result).
    public func hash(prand: UInt32, order: KeyByteOrder) -> UInt32 {
        ciphers[order.rawValue].encrypt(words: (0, 0, 0, prand & 0xFF_FFFF)).3 & 0xFF_FFFF
    }

    /// True when `address` is a resolvable private address generated from this key in `order`.
    public func matches(_ address: BluetoothAddress, order: KeyByteOrder) -> Bool {
        hash(prand: address.privatePrand, order: order) == address.privateHash
    }

    /// What `text` says the key's bytes are, as written; nil when it is not a key.
    public static func parse(_ text: String) -> [UInt8]? {
        var body = Substring(text.trimmingSpaces)
        if body.lowercased().hasPrefix("irk:") { body = body.dropFirst(4) }
        let compact = body.filter { $0 != ":" && $0 != "-" && $0 != " " }
        if compact.count == 32, let bytes = HexBytes.parse(String(compact)), bytes.count == 16 { return bytes }
        if let bytes = Base64Text.decode(String(body)), bytes.count == 16 { return bytes }
        return nil
    }

    /// Why `text` is not a key (for configuration errors): never repeats the text, which may be most of a secret.
    public static func problem(with text: String) -> String? {
        guard parse(text) == nil else { return nil }
        let compact = text.trimmingSpaces.filter { $0 != ":" && $0 != "-" && $0 != " " }
        let hexDigits = compact.filter(\.isHexDigit).count
        if hexDigits == compact.count && !compact.isEmpty {
            return "not an identity resolving key: \(compact.count) hex digits, expected 32 (16 bytes, most "
                + "significant first) or base64 of 16 bytes"
        }
        return "not an identity resolving key: expected 32 hex digits (16 bytes, most significant first) or base64 "
            + "of 16 bytes (24 characters ending in ==)"
    }

    static func hex8(_ word: UInt32) -> String {
        HexText.hex((0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) })
    }
}

/// Which byte order of a configured key produced an address.
public enum KeyByteOrder: Int, Sendable, Hashable, CaseIterable {
    /// The 16 bytes as written, most significant first (ESPresense, Home Assistant's hex form).
    case asWritten = 0
    /// The written bytes reversed (what some tools export, e.g. keys read least significant byte first).
    case reversed = 1

    /// `as-written` / `reversed`, as the state database and `check-config` write it.
    public var name: String { self == .asWritten ? "as-written" : "reversed" }

    public init?(name: String) {
        switch name {
        case "as-written": self = .asWritten
        case "reversed": self = .reversed
        default: return nil
        }
    }
}

extension String {
    package var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view = view.dropFirst() }
        while let last = view.last, last.isWhitespace { view = view.dropLast() }
        return String(view)
    }
}
