#if canImport(Glibc)
import Glibc
#endif

/// The last committed site configuration, kept in the state directory so a restart comes back on it: the signed
/// envelope as it was received (version, hash, YAML, signature), so what is read back is checked like a push.
/// Written atomically: a temporary file beside it, `fsync`, `rename`, then `fsync` of the directory.
public enum SiteStateFile {
    /// The envelope bytes in the file; nil when there is none; the reason when it cannot be read.
    /// The corresponding C functions are `open`, `fstat` and `read` (EINTR retried).
    public static func read(path: String, maxBytes: Int) -> Result<[UInt8]?, SiteStateError> {
        let fd = path.withCString { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return .success(nil) }
            return .failure(SiteStateError(path: path, message: SiteKey.describe(errno)))
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 { return .failure(SiteStateError(path: path, message: SiteKey.describe(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return .failure(SiteStateError(path: path, message: "it is not a regular file"))
        }
        guard Int(info.st_size) <= maxBytes else {
            return .failure(SiteStateError(path: path, message: "it is \(info.st_size) bytes; at most \(maxBytes)"))
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= maxBytes {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failure(SiteStateError(path: path, message: SiteKey.describe(errno)))
            }
            if n == 0 { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return .failure(SiteStateError(path: path, message: "it grew past \(maxBytes) bytes while read"))
    }

    /// Replaces the file with `text` atomically. The corresponding C functions are `open`, `write`, `fsync`,
    /// `rename` and `unlink` (for the temporary file after a failure).
    public static func write(_ text: String, to path: String) -> SiteStateError? {
        let temporary = path + ".tmp"
        let fd = temporary.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { return SiteStateError(path: temporary, message: SiteKey.describe(errno)) }
        var bytes = Array(text.utf8)
        var offset = 0
        var failure: Int32 = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += n
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            return SiteStateError(path: path, message: SiteKey.describe(failure))
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let dfd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
        bytes.removeAll()
        return nil
    }
}

/// Why the state file could not be read or written.
public struct SiteStateError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "site state file \(path): \(message)" }
}
