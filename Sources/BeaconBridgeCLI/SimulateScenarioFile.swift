#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole (small) file with POSIX calls.
enum ScenarioFile {
    struct Problem: Error { var message: String }

    static let maxBytes = 16 << 20

    static func read(_ path: String) -> Result<String, Problem> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Problem(message: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(Problem(message: String(cString: strerror(errno))))
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > maxBytes { return .failure(Problem(message: "larger than 16 MiB")) }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(Problem(message: "not UTF-8 text"))
        }
        return .success(text)
    }
}
