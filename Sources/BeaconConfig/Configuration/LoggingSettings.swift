/// The `logging:` section.
public struct LoggingSettings: Sendable, Equatable {
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case debug, info, notice, warning, error

        public static func < (a: Level, b: Level) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    public enum Format: String, Sendable, CaseIterable {
        /// `ts=... level=info msg="..." key=value` lines on stderr (journald-friendly).
        case logfmt
    }

    public var level: Level
    public var format: Format

    public init(level: Level = .info, format: Format = .logfmt) {
        self.level = level
        self.format = format
    }
}
