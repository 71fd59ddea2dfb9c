extension Logger {
    /// A metadata value. Secrets are `.redacted`: the value is dropped when the metadata is built, so it cannot
    /// leak through any handler.
    public enum MetadataValue: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
                               ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral {
        case string(String)
        case redacted

        public init(stringLiteral value: String) { self = .string(value) }
        public init(integerLiteral value: Int) { self = .string(String(value)) }

        /// Any printable value, e.g. `.describing(port)`.
        public static func describing(_ value: some CustomStringConvertible) -> MetadataValue {
            .string(value.description)
        }

        /// Marks a secret (a password, a token); the text is never kept.
        public static func secret(_ value: String?) -> MetadataValue { .redacted }

        /// A URL with any password replaced: `mqtts://user:***@host:8883`.
        public static func url(_ text: String) -> MetadataValue { .string(Redacted<String>.url(text)) }

        public var description: String {
            switch self {
            case .string(let s): s
            case .redacted: Redacted<String>.placeholder
            }
        }
    }
}

/// A value that prints as `<redacted>` wherever it is interpolated or described: wrap secrets (passwords read
/// from files or the environment) in it as soon as they are read.
public struct Redacted<Value: Sendable>: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public static var placeholder: String { "<redacted>" }

    /// The secret itself, for the one place that must use it (e.g. `mosquitto_username_pw_set`).
    public let value: Value

    public init(_ value: Value) { self.value = value }

    public var description: String { Self.placeholder }
    public var debugDescription: String { Self.placeholder }
}

extension Redacted where Value == String {
    /// `scheme://user:password@host` with the password replaced by `***`; other text unchanged.
    public static func url(_ text: String) -> String {
        let chars = Array(text)
        var schemeEnd: Int?
        for i in 0..<max(0, chars.count - 2) where chars[i] == ":" && chars[i + 1] == "/" && chars[i + 2] == "/" {
            schemeEnd = i + 3
            break
        }
        guard let schemeEnd else { return text }
        let rest = text.dropFirst(schemeEnd)
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return text }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
