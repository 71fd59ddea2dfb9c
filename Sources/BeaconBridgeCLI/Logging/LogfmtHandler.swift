import BeaconConfig
import Synchronization

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// Writes logfmt lines to a file descriptor (stderr by default), one `write` per line under a lock so lines
/// from different threads never interleave.
public struct LogfmtHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    /// Whether lines start with `ts=`; journald stamps lines itself, so `run` turns it off under systemd.
    public var includesTimestamp: Bool
    private let sink: LogSink

    public init(level: Logger.Level = .info, includesTimestamp: Bool = true, fileDescriptor: Int32 = 2) {
        self.logLevel = level
        self.includesTimestamp = includesTimestamp
        self.sink = LogSink.shared(fileDescriptor)
    }

    /// The handler `logging:` asks for, on `fileDescriptor` (stderr). When that descriptor is the journal stream
    /// (`writesToJournal`) lines carry no `ts=`: journald stamps them itself.
    public init(settings: LoggingSettings, environment: [String: String], fileDescriptor: Int32 = 2) {
        self.init(
            level: Logger.Level(settings.level),
            includesTimestamp: !Self.writesToJournal(environment: environment, fileDescriptor: fileDescriptor),
            fileDescriptor: fileDescriptor)
    }

    /// Whether `fileDescriptor` is the stream systemd connected to the journal: `$JOURNAL_STREAM` holds that
    /// stream's `DEVICE:INODE` (systemd.exec(5)). The variable is inherited by children whose stderr was
    /// redirected elsewhere (a file, a pipe), so it counts only when it matches the descriptor.
    /// The corresponding C function is `fstat`.
    public static func writesToJournal(environment: [String: String], fileDescriptor: Int32 = 2) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    public func log(level: Logger.Level, label: String, message: String, metadata extra: Logger.Metadata?) {
        let merged = extra.map { metadata.merging($0) { $1 } } ?? metadata
        let line = LogfmtFormatter.line(
            timestamp: includesTimestamp ? Self.timestamp() : nil, level: level,
            label: label, message: message, metadata: merged)
        sink.write(line + "\n")
    }

    /// RFC 3339 UTC with milliseconds, e.g. `2026-11-30T10:55:01.234Z`, of `epoch` seconds (now when nil).
    /// The corresponding C functions are `clock_gettime` and `gmtime_r`.
    static func timestamp(epoch: Double? = nil) -> String {
        var now = timespec()
        if let epoch, epoch.isFinite, epoch >= 0, epoch < 1e11 {
            now.tv_sec = Int(epoch)
            now.tv_nsec = Int((epoch - epoch.rounded(.down)) * 1e9)
        } else {
            let wall = SystemClock.realtime()
            now.tv_sec = Int(wall)
            now.tv_nsec = Int((wall - wall.rounded(.down)) * 1e9)
        }
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let millis = Int32(now.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }
}

/// One output file descriptor and the lock that keeps its lines whole. A handler's copies (`Logger.child`)
/// share its sink; every handler on stderr shares `standardError` (a constant, not a registry), whose lines
/// go through `Output`'s writer: in order with the commands' own stderr lines, and a slow stderr holds up a
/// logging task only once 64 KiB wait.
final class LogSink: Sendable {
    private let fileDescriptor: Int32
    private let lock = Mutex(())

    private init(_ fd: Int32) { fileDescriptor = fd }

    private static let standardError = LogSink(2)

    /// The sink of `fd`: the shared stderr sink, or a new one for any other descriptor.
    static func shared(_ fd: Int32) -> LogSink { fd == 2 ? standardError : LogSink(fd) }

    /// The corresponding C function is `write` (EINTR retried, partial writes continued).
    func write(_ text: String) {
        guard fileDescriptor != 2 else { return Output.write(text, to: 2) }
        lock.withLock { _ in _ = FileDescriptorWrite.all(fileDescriptor, text) }
    }
}
