/// A place in a configuration file: 1-based line and column (columns count Unicode scalars, as libyaml does).
public struct SourceMark: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// For nodes built in code (tests, defaults) that come from no file.
    public static let unknown = SourceMark(line: 0, column: 0)

    public var isKnown: Bool { line > 0 }

    public static func < (a: SourceMark, b: SourceMark) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }

    public var description: String { "\(line):\(column)" }
}
