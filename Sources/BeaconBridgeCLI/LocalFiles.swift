#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// The few file operations `keys import-bluez` and `gatt dfu` need, on Glibc directly.
enum LocalFiles {
    enum WriteOutcome: Equatable {
        case written, unchanged, differs
        case failed(String)
    }

    static func lastError() -> String { String(cString: strerror(errno)) }

    /// Names in a directory (without `.` and `..`), nil when it cannot be read. The C functions are `opendir`,
    /// `readdir` and `closedir`.
    static func entries(of directory: String) -> [String]? {
        guard let handle = opendir(directory) else { return nil }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A small text file's content, nil when it cannot be read or is larger than `maxBytes`.
    static func read(_ path: String, maxBytes: Int) -> String? {
        readBytes(path, maxBytes: maxBytes).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A file's bytes, nil when it cannot be read (errno tells why) or is larger than `maxBytes` (errno EFBIG).
    static func readBytes(_ path: String, maxBytes: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= maxBytes {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
        }
        errno = EFBIG
        return nil
    }

    /// Creates `directory` (mode 0700) unless it exists; true when it is there afterwards.
    static func makeDirectory(_ directory: String) -> Bool {
        if mkdir(directory, 0o700) == 0 || errno == EEXIST { return true }
        return false
    }

    /// Writes a secret to a new file with mode 0600 (never loosening an existing file's mode); an existing
    /// file is left alone when it holds the same text and reported when it holds another.
    static func writeSecret(_ text: String, to path: String) -> WriteOutcome {
        if let existing = read(path, maxBytes: 4096) {
            return existing.filter { !$0.isWhitespace } == text.filter { !$0.isWhitespace } ? .unchanged : .differs
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failed(lastError()) }
        defer { close(fd) }
        let failure = FileDescriptorWrite.all(fd, text)
        return failure == 0 ? .written : .failed(String(cString: strerror(failure)))
    }
}
