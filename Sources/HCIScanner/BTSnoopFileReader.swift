import BeaconFormats
import BeaconModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads a btsnoop capture file record by record through a fixed-size buffer, so replaying a capture of any
/// size takes the same memory (the 10-minute daemon bench replays about 3 million events). Checks the header
/// and reports damage exactly as `BTSnoopReader` does on the whole file (same offsets and reasons).
///
/// Records longer than the buffer are skipped unread (an HCI event is at most 257 bytes, so such a record is
/// never one). Not Sendable: it owns a file descriptor and a cursor; `ReplayCursor` keeps it under a mutex.
/// Used by `replay` and `decode --btsnoop` (which so never reads a whole capture into memory).
public final class BTSnoopFileReader {
    public enum Failure: Error {
        /// The file could not be opened or read.
        case io(CaptureFile.Failure)
        /// Not a btsnoop file, or a record cut short (offset counted from the start of the file).
        case damaged(DecodeError)
    }

    public static let defaultBufferSize = 1 << 16

    public let path: String
    public let datalink: BTSnoopDatalink
    private var fd: Int32
    private let fileSize: Int
    private var buffer: [UInt8]
    /// Valid bytes are buffer[start..<end]; `bufferOffset` is the file offset of buffer[0].
    private var start = 0
    private var end = 0
    private var bufferOffset = 0
    private var atEndOfFile = false
    private var failed = false

    /// Opens the file and checks the header. The corresponding C calls are `open`, `fstat`, `read`.
    public init(path: String, bufferSize: Int = defaultBufferSize) throws(Failure) {
        precondition(bufferSize >= BTSnoopReader.recordHeaderLength + 258, "buffer smaller than one HCI event record")
        self.path = path
        do throws(CaptureFile.Failure) { fd = try CaptureFile.openForReading(path: path) } catch { throw .io(error) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = CaptureFile.Failure(path: path, call: "fstat", errno: errno)
            close(fd)
            throw .io(failure)
        }
        fileSize = Int(info.st_size)
        let header: [UInt8]
        do throws(Failure) {
            header = try Self.readHeader(fd: fd, path: path)
            datalink = try Self.checkHeader(header)
        } catch {
            close(fd)
            throw error
        }
        buffer = [UInt8](repeating: 0, count: bufferSize)
        bufferOffset = header.count
    }

    /// Up to the first 16 bytes of the file (fewer when the file is shorter).
    private static func readHeader(fd: Int32, path: String) throws(Failure) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: BTSnoopReader.headerLength)
        var count = 0
        while count < header.count {
            let got = header.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + count, raw.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .io(CaptureFile.Failure(path: path, call: "read", errno: errno))
            }
            if got == 0 { break }
            count += got
        }
        return Array(header[..<count])
    }

    private static func checkHeader(_ header: [UInt8]) throws(Failure) -> BTSnoopDatalink {
        do throws(DecodeError) {
            return try BTSnoopReader(bytes: header).datalink
        } catch {
            throw .damaged(error)
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// File offset of the next record.
    var offset: Int { bufferOffset + start }

    /// The next record, nil at a clean end of file. After a failure the reader stays at end.
    public func next() throws(Failure) -> BTSnoopRecord? {
        try nextRecord { original, flags, drops, timestamp, payload, recordStart in
            BTSnoopRecord(
                originalLength: original, flags: flags, drops: drops, timestampMicros: timestamp,
                payload: Array(payload), fileOffset: recordStart)
        }
    }

    /// The next LE Meta event (`BTSnoopRecord.hciEvent(datalink:)` starting with 0x3E) with its capture time,
    /// nil at a clean end of file; other records are passed over. The same records and failures as `next()`,
    /// but one allocation per event (its bytes) and none for the records passed over.
    public func nextLEMetaEvent() throws(Failure) -> CapturedHCIEvent? {
        let datalink = datalink
        return try nextRecord { _, flags, _, timestamp, payload, _ in
            guard let event = BTSnoopRecord.hciEvent(in: payload, flags: flags, datalink: datalink),
                event.first == 0x3E
            else { return nil }
            return CapturedHCIEvent(
                timestamp: BTSnoopTime.unixSeconds(fromBTSnoop: timestamp), bytes: Array(event))
        }
    }

    /// Reads records until `make` returns a value for one (given the header fields and the payload, which is
    /// only valid during the call), nil at a clean end of file. After a failure the reader stays at end.
    private func nextRecord<Result>(
        _ make: (
            _ original: UInt32, _ flags: UInt32, _ drops: UInt32, _ timestamp: UInt64, _ payload: ArraySlice<UInt8>,
            _ recordStart: Int
        ) -> Result?
    ) throws(Failure) -> Result? {
        while true {
            guard !failed else { return nil }
            do throws(Failure) {
                // The file as it was when opened (a capture still being recorded ends there, as a whole-file
                // read would have).
                let recordStart = offset
                guard fileSize > recordStart else { return nil }
                try fill(BTSnoopReader.recordHeaderLength)
                let available = min(end - start, fileSize - recordStart)
                if available == 0 { return nil }
                guard available >= BTSnoopReader.recordHeaderLength else {
                    throw .damaged(
                        DecodeError(offset: recordStart, reason: "truncated record header: \(available) of 24 bytes"))
                }
                // One read of the buffer property for the six fields (each read of a class's stored property
                // is a dynamic exclusivity check: six per record were 3 % of a replay's instructions).
                let bytes = buffer
                let original = Self.readUInt32(bytes, at: start)
                let included = Int(Self.readUInt32(bytes, at: start + 4))
                let flags = Self.readUInt32(bytes, at: start + 8)
                let drops = Self.readUInt32(bytes, at: start + 12)
                let timestamp =
                    UInt64(Self.readUInt32(bytes, at: start + 16)) << 32
                    | UInt64(Self.readUInt32(bytes, at: start + 20))
                start += BTSnoopReader.recordHeaderLength
                let left = fileSize - offset
                guard included <= left else {
                    throw .damaged(
                        DecodeError(
                            offset: recordStart, reason: "truncated record: \(included) bytes declared, \(left) left"))
                }
                if included > buffer.count {
                    try skip(included)
                    continue
                }
                try fill(included)
                guard end - start >= included else {
                    // The file shrank while being read.
                    throw .damaged(
                        DecodeError(
                            offset: recordStart,
                            reason: "truncated record: \(included) bytes declared, \(end - start) left"))
                }
                let payload = start..<(start + included)
                start += included
                if let result = make(original, flags, drops, timestamp, buffer[payload], recordStart) { return result }
            } catch {
                failed = true
                close(fd)
                fd = -1
                throw error
            }
        }
    }

    private static func readUInt32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
            | UInt32(bytes[index + 3])
    }

    /// Makes at least `count` bytes available from `start` (fewer only at the end of the file).
    private func fill(_ count: Int) throws(Failure) {
        guard end - start < count, !atEndOfFile else { return }
        if start > 0 {
            // Move the unread tail to the front.
            let tail = end - start
            buffer.withUnsafeMutableBytes { raw in
                guard tail > 0, let base = raw.baseAddress else { return }
                memmove(base, base + start, tail)
            }
            bufferOffset += start
            start = 0
            end = tail
        }
        while end - start < count, end < buffer.count {
            let wanted = buffer.count - end
            let got = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + end, wanted) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .io(CaptureFile.Failure(path: path, call: "read", errno: errno))
            }
            if got == 0 {
                atEndOfFile = true
                return
            }
            end += got
        }
    }

    /// Passes over `count` bytes without keeping them.
    private func skip(_ count: Int) throws(Failure) {
        var remaining = count
        while remaining > 0 {
            if end == start {
                bufferOffset += end
                start = 0
                end = 0
                try fill(min(remaining, buffer.count))
                guard end > start else { return }
            }
            let step = min(remaining, end - start)
            start += step
            remaining -= step
        }
    }
}
