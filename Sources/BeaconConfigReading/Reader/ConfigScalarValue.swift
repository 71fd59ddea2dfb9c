/// Why a scalar could not be read as the type a key expects; becomes the message.
public struct ConfigValueError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A type a single configuration value (a YAML scalar) can be read as.
///
/// The section that reads a key decides its type, not the YAML schema: `room: no` is the string "no" and
/// `enabled: no` is the boolean false.
public protocol ConfigScalarValue {
    /// For messages: "a whole number", "true or false".
    static var configTypeDescription: String { get }
    static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> Self
    /// How a value is shown in messages ("between 1s and 1h"); defaults to `String(describing:)`.
    static func configText(_ value: Self) -> String
}

extension ConfigScalarValue {
    public static func configText(_ value: Self) -> String { String(describing: value) }
}

extension String: ConfigScalarValue {
    public static var configTypeDescription: String { "a string" }
    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> String { scalar.text }
}

extension Bool: ConfigScalarValue {
    public static var configTypeDescription: String { "true or false" }

    /// YAML 1.1 spellings: true/false, yes/no, on/off, in any letter case.
    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> Bool {
        switch scalar.text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw ConfigValueError("`\(scalar.text)` is not a boolean (use true or false)")
        }
    }
}

extension Int: ConfigScalarValue {
    public static var configTypeDescription: String { "a whole number" }

    /// Decimal with optional sign and `_` separators, or hexadecimal with `0x` (e.g. a company id `0x004C`).
    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> Int {
        var text = Substring(scalar.text.filter { $0 != "_" })
        var negative = false
        if text.first == "-" || text.first == "+" {
            negative = text.first == "-"
            text = text.dropFirst()
        }
        var radix = 10
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            radix = 16
            text = text.dropFirst(2)
        }
        let digitsOnly =
            radix == 16
            ? text.allSatisfy { $0.isHexDigit }
            : text.allSatisfy { $0 >= "0" && $0 <= "9" }
        guard !text.isEmpty, digitsOnly else {
            throw ConfigValueError("`\(scalar.text)` is not a whole number")
        }
        guard let magnitude = Int(text, radix: radix) else {
            throw ConfigValueError("`\(scalar.text)` is too large")
        }
        return negative ? -magnitude : magnitude
    }
}

extension Double: ConfigScalarValue {
    public static var configTypeDescription: String { "a number" }

    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> Double {
        let text = scalar.text.filter { $0 != "_" }
        // Swift's parser also takes hexadecimal floats, "inf" and "nan": none is a sensible setting.
        let plain = text.allSatisfy { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" || $0 == "e" || $0 == "E" }
        guard plain, let value = Double(text), value.isFinite else {
            throw ConfigValueError("`\(scalar.text)` is not a number")
        }
        return value
    }

    public static func configText(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
