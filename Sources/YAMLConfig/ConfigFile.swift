import BeaconModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads a configuration file's bytes, bounded in size.
enum ConfigFile {
    enum Failure: Error, Equatable {
        case missing
        case unreadable(String)
        case tooLarge(Int)
    }

    /// Only a regular file is read: it is opened with `O_NONBLOCK` (opening a FIFO then never waits for a
    /// writer) and anything else (a directory, a FIFO or pipe, a device) is refused before reading.
    /// The corresponding C functions are `open`, `fstat`, `fcntl` and `read` (EINTR retried).
    static func read(path: String, maxBytes: Int) -> Result<[UInt8], Failure> {
        let fd = path.withCString { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        if fd < 0 {
            let code = errno
            return .failure(code == ENOENT || code == ENOTDIR ? .missing : .unreadable(describe(code)))
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 { return .failure(.unreadable(describe(errno))) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .failure(.unreadable("it is a directory"))
        case S_IFIFO:
            return .failure(.unreadable("it is a FIFO or pipe, not a regular file (save the configuration to a file)"))
        default: return .failure(.unreadable("it is not a regular file (a device or socket)"))
        }
        if Int(info.st_size) > maxBytes { return .failure(.tooLarge(Int(info.st_size))) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(describe(errno)))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maxBytes { return .failure(.tooLarge(bytes.count)) }
        }
        return .success(bytes)
    }

    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }
}
