#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// Opening capture files with plain POSIX calls (no Foundation), errors naming the file: captures are read
/// only from regular files (a FIFO, a pipe such as `/dev/stdin` fed by `|`, or a device is refused at once
/// instead of blocking), and written only to new or regular files created mode 0600, never through a
/// symbolic link planted at the path.
public enum CaptureFile {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var call: String
        public var errno: Int32
        /// Set instead of `errno`'s text when the file is of a kind that cannot be used.
        public var reason: String?

        public init(path: String, call: String, errno: Int32, reason: String? = nil) {
            self.path = path
            self.call = call
            self.errno = errno
            self.reason = reason
        }

        public var description: String {
            if let reason { return "\(path): \(reason)" }
            let text = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
            return "\(path): \(call) failed: \(text) (errno \(errno))"
        }

        /// The file does not exist or cannot be opened for reading (sysexits EX_NOINPUT), as opposed to a read
        /// error in the middle of it.
        public var isMissingOrUnreadable: Bool { call == "open" || call == "fstat" }
    }

    /// Opens a capture for reading: `O_NONBLOCK` so that opening a FIFO never waits for a writer, then the
    /// file type is checked and anything but a regular file refused. The corresponding C calls are `open`,
    /// `fstat`, `fcntl`.
    public static func openForReading(path: String) throws(Failure) -> Int32 {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw Failure(path: path, call: "open", errno: errno) }
        try requireRegularFile(
            fd, path: path, otherwise: "a capture is read from a btsnoop file (save a stream to a file first)")
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Closes `fd` and throws unless it is a regular file (`fstat`); `otherwise` ends the refusal's reason.
    private static func requireRegularFile(_ fd: Int32, path: String, otherwise: String) throws(Failure) {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = Failure(path: path, call: "fstat", errno: errno)
            close(fd)
            throw failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Failure(
                path: path, call: "open", errno: EINVAL,
                reason: "\(kind(info.st_mode)), not a regular file: \(otherwise)")
        }
    }

    /// Creates (or truncates a regular file) for writing, mode 0600 whatever the umask. Refuses a symbolic
    /// link at the path (`O_NOFOLLOW`) and anything but a regular file (a FIFO would block: `O_NONBLOCK`).
    /// Returns the descriptor. The corresponding C calls are `open`, `fstat`, `fchmod`.
    public static func create(path: String) throws(Failure) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP {
                throw Failure(
                    path: path, call: "open", errno: code,
                    reason:
                        "is a symbolic link: refusing to write a capture through it (remove it or choose another path)")
            }
            throw Failure(path: path, call: "open", errno: code)
        }
        try requireRegularFile(fd, path: path, otherwise: "refusing to record into it")
        guard ftruncate(fd, 0) == 0, fchmod(fd, 0o600) == 0 else {
            let failure = Failure(path: path, call: "ftruncate", errno: errno)
            close(fd)
            throw failure
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Why a capture cannot be written at `path`, or nil, without creating it (for `check-config`): a symbolic
    /// link, a directory or other non-regular file, or a directory that does not exist.
    public static func outputProblem(_ path: String) -> String? {
        var info = stat()
        if lstat(path, &info) == 0 {
            let type = info.st_mode & S_IFMT
            if type == S_IFLNK { return "`\(path)` is a symbolic link: a capture is never written through one" }
            if type != S_IFREG { return "`\(path)` is \(kind(info.st_mode)), not a regular file" }
            return access(path, W_OK) == 0 ? nil : "`\(path)` is not writable: \(describe(errno))"
        }
        guard errno == ENOENT else { return "`\(path)` cannot be checked: \(describe(errno))" }
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        var parentInfo = stat()
        guard stat(parent, &parentInfo) == 0, parentInfo.st_mode & S_IFMT == S_IFDIR else {
            return "directory `\(parent)` does not exist"
        }
        return access(parent, W_OK | X_OK) == 0 ? nil : "cannot create files in `\(parent)`: \(describe(errno))"
    }

    /// "a FIFO (named pipe)", "a directory", ... for messages.
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO or pipe"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }

    /// Largest capture read into memory by `read(path:)`.
    static let maximumSize = 1 << 30

    /// Reads a whole (regular) file: tests and small captures; replays stream through `BTSnoopFileReader`.
    static func read(path: String) throws(Failure) -> [UInt8] {
        let fd = try openForReading(path: path)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, call: "read", errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumSize else {
                throw Failure(path: path, call: "read (file over 1 GiB)", errno: EFBIG)
            }
        }
        return bytes
    }

    /// Writes all bytes, retrying on EINTR and short writes.
    static func write(_ bytes: [UInt8], to fd: Int32, path: String) throws(Failure) {
        let failure = FileDescriptorWrite.all(fd, bytes)
        guard failure == 0 else { throw Failure(path: path, call: "write", errno: failure) }
    }
}
