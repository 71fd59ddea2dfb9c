/// One problem found while validating configuration. `path` is the key path in the YAML document,
/// e.g. `regions[2].enter.rssi_above`; the YAML loader adds file, line and column.
public struct ConfigIssue: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    /// The configuration file the issue was found in, when known.
    public var file: String?
    /// 1-based line of the offending key or value, when known.
    public var line: Int?
    /// 1-based column of the offending key or value, when known.
    public var column: Int?

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public init(path: String, message: String, file: String?, line: Int?, column: Int?) {
        self.path = path
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(path): \(message)" }

    /// `FILE:LINE:COL: KEYPATH: MESSAGE`, leaving out the parts that are unknown; the format compilers use,
    /// so editors and terminals can jump to the place.
    public var located: String {
        var prefix = ""
        if let file { prefix += "\(file):" }
        if let line {
            prefix += "\(line):"
            if let column { prefix += "\(column):" }
        }
        let head = prefix.isEmpty ? "" : prefix + " "
        return path.isEmpty ? "\(head)\(message)" : "\(head)\(path): \(message)"
    }
}
