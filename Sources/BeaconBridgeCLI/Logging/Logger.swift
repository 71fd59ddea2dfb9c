import BeaconConfig

/// A logger shaped like swift-log's: a label, metadata and a `LogHandler` that formats and writes.
///
/// Messages and metadata are autoclosures, evaluated only when the level is enabled. Secrets go in as
/// `.redacted` metadata (or `Redacted` values) and never reach the output.
public struct Logger: Sendable {
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }

        var rank: Int { Level.allCases.firstIndex(of: self)! }

        /// The level configured as `logging.level`.
        public init(_ setting: LoggingSettings.Level) {
            switch setting {
            case .debug: self = .debug
            case .info: self = .info
            case .notice: self = .notice
            case .warning: self = .warning
            case .error: self = .error
            }
        }
    }

    public typealias Metadata = [String: MetadataValue]

    public let label: String
    public var handler: any LogHandler

    public init(label: String, handler: any LogHandler) {
        self.label = label
        self.handler = handler
    }

    public var logLevel: Level {
        get { handler.logLevel }
        set { handler.logLevel = newValue }
    }

    /// Metadata attached to every message of this logger (and of copies made afterwards).
    public subscript(metadataKey key: String) -> MetadataValue? {
        get { handler.metadata[key] }
        set { handler.metadata[key] = newValue }
    }

    /// A copy for a sub-component, with its own label and the same handler settings.
    public func child(label: String) -> Logger { Logger(label: label, handler: handler) }

    public func log(
        level: Level, _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata? = nil
    ) {
        guard level >= handler.logLevel else { return }
        handler.log(level: level, label: label, message: message(), metadata: metadata())
    }

    public func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .trace, message(), metadata: metadata())
    }

    public func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .debug, message(), metadata: metadata())
    }

    public func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .info, message(), metadata: metadata())
    }

    public func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .notice, message(), metadata: metadata())
    }

    public func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .warning, message(), metadata: metadata())
    }

    public func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .error, message(), metadata: metadata())
    }

    public func critical(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .critical, message(), metadata: metadata())
    }
}

/// Formats and writes log messages. Implementations are value types holding their level and metadata
/// (copied with the logger) and share their output through a thread-safe sink.
public protocol LogHandler: Sendable {
    var logLevel: Logger.Level { get set }
    var metadata: Logger.Metadata { get set }
    /// Called only for enabled levels; `metadata` is the call's own, to be merged over `self.metadata`.
    func log(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata?)
}
