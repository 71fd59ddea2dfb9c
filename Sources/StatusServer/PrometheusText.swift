/// Prometheus' text exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/):
/// `# HELP` and `# TYPE` once per family, then its samples; label values escaped (`\\`, `\"`, `\n`).
public struct PrometheusText: Sendable {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    public private(set) var text = ""

    public init(capacity: Int = 4096) {
        text.reserveCapacity(capacity)
    }

    public enum Kind: String, Sendable { case counter, gauge, histogram }

    /// `# HELP` and `# TYPE` of a family.
    public mutating func family(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample line.
    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, (label, labelValue)) in labels.enumerated() {
                if index > 0 { text += "," }
                text += "\(label)=\"\(Self.escapedLabel(labelValue))\""
            }
            text += "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Int) {
        sample(name, labels, Double(value))
    }

    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: UInt64) {
        sample(name, labels, Double(value))
    }

    /// A family with one sample and no labels.
    public mutating func single(_ name: String, _ kind: Kind, help: String, _ value: Double) {
        family(name, kind, help: help)
        sample(name, [], value)
    }

    /// A histogram family: `# HELP`/`# TYPE`, one `<name>_bucket{le="..."}` sample per cumulative bucket (the last
    /// one's bound `+Inf`, its count the total), then `<name>_sum` and `<name>_count`.
    public mutating func histogram(
        _ name: String, help: String, buckets: [(upperBound: Double, count: UInt64)], sum: Double, count: UInt64
    ) {
        family(name, .histogram, help: help)
        for bucket in buckets { sample(name + "_bucket", [("le", Self.format(bucket.upperBound))], bucket.count) }
        if buckets.last?.upperBound != .infinity { sample(name + "_bucket", [("le", "+Inf")], count) }
        sample(name + "_sum", [], sum)
        sample(name + "_count", [], count)
    }

    /// Integers without a fraction, `+Inf`/`-Inf`/`NaN` as the format spells them.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func escapedLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func escapedHelp(_ value: String) -> String {
        value.replacingBackslashesAndNewlines()
    }
}

extension String {
    fileprivate func replacingBackslashesAndNewlines() -> String {
        var out = ""
        for character in self {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
