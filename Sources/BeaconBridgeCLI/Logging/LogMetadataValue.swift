extension Logger {
    /// A metadata value. Secrets are `.redacted`: the value is dropped when the metadata is built, so it cannot
    /// leak through any handler.
    public enum MetadataValue: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral
    {
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
