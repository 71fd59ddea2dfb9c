import BeaconModel

/// Typed, path-aware access to one JSON object of a scenario file; `finish()` rejects keys nobody read, so a
/// misspelt key is an error instead of a silently ignored setting.
struct ScenarioFields {
    let path: String
    /// The object's members in file order.
    let members: [(String, JSONValue)]
    private var used: Set<String> = []

    init(_ value: JSONValue, path: String) throws(ScenarioError) {
        guard case let .object(members) = value else { throw ScenarioError(path: path, message: "expected an object") }
        self.members = members
        self.path = path
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func raw(_ key: String) -> JSONValue? {
        used.insert(key)
        guard let value = members.first(where: { $0.0 == key })?.1, value != .null else { return nil }
        return value
    }

    mutating func has(_ key: String) -> Bool { members.contains { $0.0 == key } }

    mutating func double(_ key: String) throws(ScenarioError) -> Double? {
        guard let value = raw(key) else { return nil }
        switch value {
        case let .int(number): return Double(number)
        case let .double(number): return number
        default: throw ScenarioError(path: keyPath(key), message: "expected a number")
        }
    }

    mutating func double(_ key: String, default fallback: Double) throws(ScenarioError) -> Double {
        try double(key) ?? fallback
    }

    mutating func int(_ key: String) throws(ScenarioError) -> Int? {
        guard let value = raw(key) else { return nil }
        if case let .int(number) = value, let result = Int(exactly: number) { return result }
        if case let .double(number) = value, let result = Int(exactly: number) { return result }
        throw ScenarioError(path: keyPath(key), message: "expected an integer")
    }

    mutating func bool(_ key: String) throws(ScenarioError) -> Bool? {
        guard let value = raw(key) else { return nil }
        guard case let .bool(flag) = value else {
            throw ScenarioError(path: keyPath(key), message: "expected true or false")
        }
        return flag
    }

    mutating func string(_ key: String) throws(ScenarioError) -> String? {
        guard let value = raw(key) else { return nil }
        guard case let .string(text) = value else {
            throw ScenarioError(path: keyPath(key), message: "expected a string")
        }
        return text
    }

    /// A string, or a number rendered as a decimal string (identifiers like a major of 7).
    mutating func identifier(_ key: String) throws(ScenarioError) -> String? {
        guard let value = raw(key) else { return nil }
        return try Self.identifier(value, path: keyPath(key))
    }

    static func identifier(_ value: JSONValue, path: String) throws(ScenarioError) -> String? {
        switch value {
        case .null: return nil
        case let .string(text): return text
        case let .int(number): return String(number)
        default: throw ScenarioError(path: path, message: "expected a string or an integer")
        }
    }

    mutating func array(_ key: String) throws(ScenarioError) -> [JSONValue]? {
        guard let value = raw(key) else { return nil }
        guard case let .array(values) = value else {
            throw ScenarioError(path: keyPath(key), message: "expected an array")
        }
        return values
    }

    mutating func object(_ key: String) throws(ScenarioError) -> ScenarioFields? {
        guard let value = raw(key) else { return nil }
        return try ScenarioFields(value, path: keyPath(key))
    }

    func finish() throws(ScenarioError) {
        if let unknown = members.first(where: { !used.contains($0.0) }) {
            throw ScenarioError(path: keyPath(unknown.0), message: "unknown key")
        }
    }
}
