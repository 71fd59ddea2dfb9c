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
