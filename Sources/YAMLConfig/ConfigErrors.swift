import BeaconConfigReading

/// Why a configuration could not be loaded: every problem, each with file, line, column and key path.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file does not exist (sysexits EX_NOINPUT).
        case fileMissing
        /// The file exists but cannot be read (permissions, a directory...).
        case fileUnreadable
        /// The file was read and has problems (sysexits EX_CONFIG).
        case invalid
    }

    public var kind: Kind
    public var issues: [ConfigIssue]

    public init(kind: Kind, issues: [ConfigIssue]) {
        self.kind = kind
        self.issues = issues
    }

    /// One `FILE:LINE:COL: KEYPATH: MESSAGE` line per issue, in file order.
    public var lines: [String] { issues.map(\.located) }

    public var description: String { lines.joined(separator: "\n") }
}
