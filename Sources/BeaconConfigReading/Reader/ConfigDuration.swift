/// A length of time written in a configuration file: `30` (seconds), `30s`, `500ms`, `2m`, `1h`, or a sum
/// such as `1m30s`. Fractions are allowed (`1.5s`); negative values are not.
public struct ConfigDuration: Sendable, Hashable, Comparable, ConfigScalarValue, CustomStringConvertible {
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    public static func < (a: ConfigDuration, b: ConfigDuration) -> Bool { a.seconds < b.seconds }

    public static var configTypeDescription: String { "a duration such as 30s, 500ms, 2m or 1h" }

    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> ConfigDuration {
        guard let seconds = parse(scalar.text) else {
            throw ConfigValueError("`\(scalar.text)` is not a duration (use e.g. 30s, 500ms, 2m or 1h)")
        }
        return ConfigDuration(seconds: seconds)
    }

    /// Seconds, or nil when `text` is not a duration.
    public static func parse(_ text: String) -> Double? {
        let chars = Array(text.filter { $0 != " " })
        guard !chars.isEmpty, chars.count <= 64 else { return nil }
        var i = 0
        var total = 0.0
        var sawUnit = false
        while i < chars.count {
            var number = ""
            while i < chars.count, chars[i].isNumber || chars[i] == "." {
                number.append(chars[i])
                i += 1
            }
            guard !number.isEmpty, number.first != ".", let value = Double(number) else { return nil }
            var unit = ""
            while i < chars.count, chars[i].isLetter {
                unit.append(chars[i])
                i += 1
            }
            let scale: Double
            switch unit {
            case "":
                scale = 1
                guard i == chars.count, !sawUnit else { return nil }
            case "ms": scale = 0.001
            case "s": scale = 1
            case "m", "min": scale = 60
            case "h": scale = 3600
            case "d": scale = 86400
            default: return nil
            }
            sawUnit = sawUnit || !unit.isEmpty
            total += value * scale
        }
        return total.isFinite ? total : nil
    }

    /// The shortest exact rendering: `1h`, `90s`, `500ms`, `1.5s`.
    public static func format(seconds: Double) -> String {
        if seconds != 0, seconds < 1, (seconds * 1000).rounded() == seconds * 1000 {
            return "\(Int(seconds * 1000))ms"
        }
        if seconds == seconds.rounded() {
            let whole = Int(seconds)
            if whole != 0, whole % 3600 == 0 { return "\(whole / 3600)h" }
            if whole != 0, whole % 60 == 0 { return "\(whole / 60)m" }
            return "\(whole)s"
        }
        return "\(seconds)s"
    }

    public static func configText(_ value: ConfigDuration) -> String { format(seconds: value.seconds) }

    public var description: String { ConfigDuration.format(seconds: seconds) }
}
