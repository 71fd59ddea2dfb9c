/// One problem found while validating configuration. `path` is the key path in the YAML document,
/// e.g. `regions[2].enter.rssi_above`; the YAML loader adds file, line and column.
public struct ConfigIssue: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) { self.path = path; self.message = message }
    public var description: String { "\(path): \(message)" }
}
