#if canImport(Glibc)
import Glibc
#endif

/// The site's HMAC key, read from the file `site.key_file` names (never argv, never the configuration file).
/// Its `description` never shows the bytes, so a key cannot reach a log line by accident.
public struct SiteKey: Sendable, CustomStringConvertible {
    /// The shortest key accepted: 32 bytes (HMAC-SHA256's block of security; `openssl rand -hex 32` writes 64).
    public static let minimumBytes = 32
    /// The longest key file read.
    public static let maximumBytes = 4_096

    public let bytes: [UInt8]

    /// A key from its bytes; the reason when it is shorter than `minimumBytes`.
    public init(bytes: [UInt8]) throws(SiteKeyError) {
        guard bytes.count >= SiteKey.minimumBytes else { throw .tooShort(bytes.count) }
        self.bytes = bytes
    }

    public var description: String { "SiteKey(\(bytes.count) bytes)" }

    /// Reads the key file: the file's bytes without trailing white space (a final newline). Only a regular file.
    /// The corresponding C functions are `open`, `fstat` and `read` (EINTR retried).
    public static func read(path: String) throws(SiteKeyError) -> SiteKey {
        let fd = path.withCString { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        if fd < 0 { throw .unreadable(path, describe(errno)) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 { throw .unreadable(path, describe(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path, "it is not a regular file") }
        guard Int(info.st_size) <= maximumBytes else {
            throw .unreadable(path, "it is larger than \(maximumBytes) bytes")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1_024)
        while bytes.count <= maximumBytes {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .unreadable(path, describe(errno))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        while let last = bytes.last, last == 0x0a || last == 0x0d || last == 0x20 || last == 0x09 { bytes.removeLast() }
        do { return try SiteKey(bytes: bytes) } catch { throw .tooShortFile(path, bytes.count) }
    }

    package static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }
}

/// Why the site key could not be used. Messages name the file, never its content.
public enum SiteKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(String, String)
    case tooShort(Int)
    case tooShortFile(String, Int)

    public var description: String {
        switch self {
        case let .unreadable(path, why): "cannot read the site key file \(path): \(why)"
        case let .tooShort(count): "the site key has \(count) bytes; at least \(SiteKey.minimumBytes) are needed"
        case let .tooShortFile(path, count):
            "the site key file \(path) holds \(count) bytes; at least \(SiteKey.minimumBytes) are needed "
                + "(make one with `openssl rand -hex 32`)"
        }
    }
}
