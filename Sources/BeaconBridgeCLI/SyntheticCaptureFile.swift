import BeaconModel
import BeaconTracking
import HCIScanner

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// A btsnoop file written incrementally from observations (the streaming form of `SyntheticCapture`), so a
/// long synthetic capture (the daemon bench: millions of reports) never sits in memory. Observations of
/// formats without a synthetic payload are skipped and counted. Not Sendable: one owner writes the file.
public final class SyntheticCaptureFile {
    public struct Failure: Error, CustomStringConvertible {
        public var path: String
        public var call: String
        public var errno: Int32
        /// Why the file was refused (a symbolic link, not a regular file), instead of `errno`'s text.
        public var reason: String? = nil
        public var description: String {
            if let reason { return "\(path): \(reason)" }
            return "\(path): \(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        }
        /// The file could not be created (as opposed to a write failing later).
        public var isCreation: Bool { call == "open" || call == "fstat" || call == "ftruncate" }
    }

    public let path: String
    public private(set) var events = 0
    public private(set) var skipped = 0
    private let writer = BTSnoopWriter(datalink: .hciUART)
    private var fd: Int32
    private var buffer: [UInt8] = []
    private static let flushThreshold = 1 << 16

    /// Creates (truncates) the file, mode 0600, and writes the btsnoop header; a symbolic link or anything
    /// but a regular file at `path` is refused (`CaptureFile.create`).
    public init(path: String) throws(Failure) {
        self.path = path
        do throws(CaptureFile.Failure) { fd = try CaptureFile.create(path: path) } catch {
            throw Failure(path: path, call: error.call, errno: error.errno, reason: error.reason)
        }
        buffer.reserveCapacity(Self.flushThreshold + 256)
        buffer += writer.header()
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Appends one LE Advertising Report event for the observation (or counts it as skipped).
    public func append(_ observation: Observation) throws(Failure) {
        guard let report = SyntheticAdvertisement.report(for: observation),
            let event = AdvertisingReportEncoder.legacyEvent(report)
        else {
            skipped += 1
            return
        }
        buffer += writer.eventRecord(event, timestamp: observation.timestamp)
        events += 1
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Appends an HCI event (event code first, no H4 byte) received at `timestamp` (Unix seconds).
    public func append(event: [UInt8], timestamp: Timestamp) throws(Failure) {
        buffer += writer.eventRecord(event, timestamp: timestamp)
        events += 1
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Writes what is buffered and closes the file. The corresponding C calls are `write`, `fsync`, `close`.
    public func finish() throws(Failure) {
        try flush()
        let result = close(fd)
        fd = -1
        guard result == 0 else { throw Failure(path: path, call: "close", errno: errno) }
    }

    private func flush() throws(Failure) {
        guard fd >= 0 else { throw Failure(path: path, call: "write (file already closed)", errno: EBADF) }
        let failure = FileDescriptorWrite.all(fd, buffer)
        guard failure == 0 else { throw Failure(path: path, call: "write", errno: failure) }
        buffer.removeAll(keepingCapacity: true)
    }
}
