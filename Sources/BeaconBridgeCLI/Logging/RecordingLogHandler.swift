import Synchronization

/// Keeps log records in memory for tests: hand the handler to the code under test and read `recorder.records`.
public struct RecordingLogHandler: LogHandler {
    public struct Record: Sendable, Equatable {
        public var level: Logger.Level
        public var label: String
        public var message: String
        public var metadata: Logger.Metadata

        /// The record as the logfmt handler would print it (without timestamp).
        public var logfmt: String {
            LogfmtFormatter.line(timestamp: nil, level: level, label: label, message: message, metadata: metadata)
        }
    }

    /// The shared store of records; thread-safe.
    public final class Recorder: Sendable {
        private let storage = Mutex<[Record]>([])
        public init() {}
        public var records: [Record] { storage.withLock { $0 } }
        func append(_ record: Record) { storage.withLock { $0.append(record) } }
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public let recorder: Recorder

    public init(level: Logger.Level = .trace, recorder: Recorder = Recorder()) {
        self.logLevel = level
        self.recorder = recorder
    }

    public func log(level: Logger.Level, label: String, message: String, metadata extra: Logger.Metadata?) {
        let merged = extra.map { metadata.merging($0) { $1 } } ?? metadata
        recorder.append(Record(level: level, label: label, message: message, metadata: merged))
    }
}
