import BeaconModel

/// A problem in a scenario file, naming where: a key path (`beacons[1].path[0].t`) or a JSON line/column.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not JSON, or a value of the wrong shape (sysexits: data error).
        case malformed
        /// Well-formed but invalid settings or regions (sysexits: configuration error).
        case invalid
    }
    public var kind: Kind
    public var path: String
    public var message: String

    public init(kind: Kind = .malformed, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
