/// Typed single values. Each returns the default (or nil) after recording an issue when the value is wrong.
extension ConfigReader {
    enum Lookup<T> {
        case absent
        case invalid
        case value(T, SourceMark)
    }

    /// Finds `key`, checks it is a single value and decodes it; records the issue on failure.
    mutating func lookup<T>(
        _ key: String, expecting: String,
        _ decode: (ConfigScalar) throws(ConfigValueError) -> T
    ) -> Lookup<T> {
        guard let entry = entry(key), !entry.value.isNull else { return .absent }
        guard let scalar = entry.value.scalar else {
            issue("expected \(expecting), found \(entry.value.kindDescription)", key: key)
            return .invalid
        }
        do {
            return .value(try decode(scalar), entry.value.mark)
        } catch {
            issue(error.message, key: key)
            return .invalid
        }
    }

    package mutating func missing(_ key: String, expecting: String) {
        guard !isStandIn else { return }
        let empty = entries.contains { $0.key == key }
        let message = empty ? "`\(key)` needs a value (\(expecting))" : "missing required key `\(key)` (\(expecting))"
        if empty { issue(message, key: key) } else { issue(message, path: path.appending(key), at: mark) }
    }

    // MARK: Generic

    public mutating func value<T: ConfigScalarValue>(_ key: String, default fallback: T) -> T {
        value(key, as: T.self) ?? fallback
    }

    public mutating func value<T: ConfigScalarValue>(_ key: String, as type: T.Type = T.self) -> T? {
        if case .value(let v, _) = lookup(key, expecting: T.configTypeDescription, T.decodeConfig) { return v }
        return nil
    }

    /// A key that must be present; records "missing required key" when absent.
    public mutating func required<T: ConfigScalarValue>(_ key: String, as type: T.Type = T.self) -> T? {
        switch lookup(key, expecting: T.configTypeDescription, T.decodeConfig) {
        case .value(let v, _): return v
        case .absent:
            missing(key, expecting: T.configTypeDescription)
            return nil
        case .invalid: return nil
        }
    }

    public mutating func value<T: ConfigScalarValue & Comparable>(
        _ key: String, default fallback: T, in range: ClosedRange<T>
    ) -> T {
        value(key, as: T.self, in: range) ?? fallback
    }

    public mutating func value<T: ConfigScalarValue & Comparable>(
        _ key: String, as type: T.Type = T.self, in range: ClosedRange<T>
    ) -> T? {
        guard let v = value(key, as: T.self) else { return nil }
        guard range.contains(v) else {
            issue(
                "must be between \(T.configText(range.lowerBound)) and \(T.configText(range.upperBound)) "
                    + "(got \(T.configText(v)))", key: key)
            return nil
        }
        return v
    }

    public mutating func required<T: ConfigScalarValue & Comparable>(
        _ key: String, as type: T.Type = T.self, in range: ClosedRange<T>
    ) -> T? {
        guard has(key) else {
            missing(key, expecting: T.configTypeDescription)
            declare(key)
            return nil
        }
        return value(key, as: T.self, in: range)
    }

    /// A value of a type the section parses itself, e.g. a MAC address; `parse` returns nil to reject it.
    public mutating func value<T>(_ key: String, expecting: String, _ parse: (String) -> T?) -> T? {
        let result = lookup(key, expecting: expecting) { (scalar) throws(ConfigValueError) -> T in
            guard let v = parse(scalar.text) else { throw ConfigValueError("`\(scalar.text)` is not \(expecting)") }
            return v
        }
        if case .value(let v, _) = result { return v }
        return nil
    }

    // MARK: Named shorthands

    public mutating func string(_ key: String, default fallback: String) -> String { value(key, default: fallback) }
    public mutating func string(_ key: String) -> String? { value(key, as: String.self) }

    /// A required string that must not be empty.
    public mutating func requiredString(_ key: String) -> String? {
        guard let s = required(key, as: String.self) else { return nil }
        if s.isEmpty {
            issue("must not be empty", key: key)
            return nil
        }
        return s
    }

    public mutating func bool(_ key: String, default fallback: Bool) -> Bool { value(key, default: fallback) }

    public mutating func int(_ key: String, default fallback: Int, in range: ClosedRange<Int>) -> Int {
        value(key, default: fallback, in: range)
    }

    public mutating func int(_ key: String, in range: ClosedRange<Int>) -> Int? { value(key, as: Int.self, in: range) }

    public mutating func double(_ key: String, default fallback: Double, in range: ClosedRange<Double>) -> Double {
        value(key, default: fallback, in: range)
    }

    public mutating func double(_ key: String, in range: ClosedRange<Double>) -> Double? {
        value(key, as: Double.self, in: range)
    }

    /// A duration in seconds; accepts `30`, `30s`, `500ms`, `2m`, `1h` (see `ConfigDuration`).
    public mutating func duration(_ key: String, default fallback: Double, in range: ClosedRange<Double>) -> Double {
        duration(key, in: range) ?? fallback
    }

    /// A duration in seconds without a range check (for settings whose `validate()` checks the range).
    public mutating func duration(_ key: String, default fallback: Double) -> Double {
        value(key, as: ConfigDuration.self)?.seconds ?? fallback
    }

    public mutating func duration(_ key: String) -> Double? { value(key, as: ConfigDuration.self)?.seconds }

    public mutating func duration(_ key: String, in range: ClosedRange<Double>) -> Double? {
        let bounds = ConfigDuration(seconds: range.lowerBound)...ConfigDuration(seconds: range.upperBound)
        return value(key, as: ConfigDuration.self, in: bounds)?.seconds
    }

    // MARK: Choices

    /// One of a fixed set of words; suggests the closest on a typo.
    public mutating func oneOf(_ key: String, _ allowed: [String]) -> String? {
        let result = lookup(key, expecting: "one of " + allowed.joined(separator: ", ")) {
            (scalar) throws(ConfigValueError) -> String in
            guard allowed.contains(scalar.text) else {
                let hint = KeySuggestion.hint(for: scalar.text, among: allowed)
                throw ConfigValueError("`\(scalar.text)` is not one of \(allowed.joined(separator: ", "))\(hint)")
            }
            return scalar.text
        }
        if case .value(let v, _) = result { return v }
        return nil
    }

    public mutating func oneOf(_ key: String, _ allowed: [String], default fallback: String) -> String {
        oneOf(key, allowed) ?? fallback
    }

    /// A case of a string enumeration, by raw value.
    public mutating func choice<E: CaseIterable & RawRepresentable>(_ key: String, as type: E.Type = E.self) -> E?
    where E.RawValue == String {
        oneOf(key, E.allCases.map(\.rawValue)).flatMap(E.init(rawValue:))
    }

    public mutating func choice<E: CaseIterable & RawRepresentable>(_ key: String, default fallback: E) -> E
    where E.RawValue == String {
        choice(key, as: E.self) ?? fallback
    }

    // MARK: Bytes

    /// Hexadecimal bytes (`0x` prefix, `:` and `-` separators allowed), with a byte count constraint.
    public mutating func hexBytes(_ key: String, count: ClosedRange<Int>) -> [UInt8]? {
        guard let hex = value(key, as: HexBytes.self) else { return nil }
        guard count.contains(hex.bytes.count) else {
            let want =
                count.lowerBound == count.upperBound
                ? "\(count.lowerBound)"
                : "\(count.lowerBound) to \(count.upperBound)"
            issue("must be \(want) bytes (got \(hex.bytes.count))", key: key)
            return nil
        }
        return hex.bytes
    }

    /// A 128-bit UUID, returned in canonical lower-case dashed form.
    public mutating func uuid(_ key: String) -> String? { value(key, as: ConfigUUID.self)?.text }
}
