#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file for the decode command (the core does no I/O). The corresponding C functions are
/// `open`, `read` and `close`; EINTR is retried.
enum DecodeFile {
    struct Failure: Error { var message: String }

    static func read(_ path: String, limit: Int = 512 * 1024 * 1024) -> Result<[UInt8], Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Failure(message: "cannot open \(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(Failure(message: "cannot read \(path): \(String(cString: strerror(errno)))"))
            }
            if count == 0 { break }
            out.append(contentsOf: chunk[0..<count])
            if out.count > limit { return .failure(Failure(message: "\(path) is larger than \(limit) bytes")) }
        }
        return .success(out)
    }
}
