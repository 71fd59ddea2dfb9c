import BeaconConfigReading
import BeaconModel

extension JSONValue {
    /// The same value as a configuration document (JSON is YAML's flow syntax): numbers and Booleans become
    /// plain scalars, strings double-quoted ones (so `"5"` stays a string where the reader wants one), `null` an
    /// empty value. Scenario files have no line numbers here: their errors name key paths.
    var configNode: ConfigNode {
        switch self {
        case .null: .null()
        case let .bool(flag): .scalar(flag ? "true" : "false")
        case let .int(number): .scalar(String(number))
        case let .double(number): .scalar(number.description)
        case let .string(text): .scalar(text, style: .doubleQuoted)
        case let .array(items): .sequence(items.map(\.configNode))
        case let .object(members): .mapping(members.map { ConfigEntry(key: $0.0, value: $0.1.configNode) })
        }
    }
}

extension ScenarioFields {
    /// Reads this object with the YAML configuration's own section decoder (`TrackerSettings(from:)`,
    /// `RegionRule(from:inherited:)`, ...), so a scenario file and a gateway's YAML spell, type-check and
    /// default every key in one place. Unknown keys are errors, as in the YAML. Throws the first problem with
    /// its key path (and how many more there are).
    func read<T>(_ decode: (inout ConfigReader) -> T) throws(ScenarioError) -> T {
        var reader = ConfigReader(JSONValue.object(members).configNode, path: ConfigPath(parsing: path))
        let result = decode(&reader)
        reader.reportUnknownKeys()
        if let first = reader.issues.first {
            let more = reader.issues.count > 1 ? " (and \(reader.issues.count - 1) more)" : ""
            throw ScenarioError(kind: .invalid, path: first.path, message: first.message + more)
        }
        return result
    }
}
