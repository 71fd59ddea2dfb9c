#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and appending writes with plain POSIX calls (no Foundation), errors naming the file.
enum CaptureFile {
    /// Largest capture read into memory.
    static let maximumSize = 1 << 30

    struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        var path: String
        var call: String
        var errno: Int32
        var description: String {
            let text = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
            return "\(path): \(call) failed: \(text) (errno \(errno))"
        }
    }

    /// Reads a whole file. The corresponding C calls are `open`, `fstat`, `read`.
    static func read(path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, call: "open", errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(path: path, call: "fstat", errno: errno) }
        guard Int(info.st_size) <= maximumSize else { throw Failure(path: path, call: "read (file over 1 GiB)", errno: EFBIG) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, call: "read", errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumSize else { throw Failure(path: path, call: "read (file over 1 GiB)", errno: EFBIG) }
        }
        return bytes
    }

    /// Creates (truncates) a file for writing; returns the descriptor.
    static func create(path: String) throws(Failure) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(path: path, call: "open", errno: errno) }
        return fd
    }

    /// Writes all bytes, retrying on EINTR and short writes.
    static func write(_ bytes: [UInt8], to fd: Int32, path: String) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, call: "write", errno: errno)
            }
            offset += count
        }
    }
}
