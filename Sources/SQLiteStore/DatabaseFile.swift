import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The database file on disk, before SQLite opens it: whether its path can hold a database (checked the same
/// way by `check-config` and at daemon start), creating it with mode 0600 whatever the umask, and moving a
/// damaged file aside.
public enum DatabaseFile {
    /// The suffixes SQLite adds to the database's name for its WAL-mode companions.
    static let companions = ["-wal", "-shm"]

    /// Why `path` cannot be opened or created as the database, or nil. Does not create the database: an
    /// existing file is opened read-write and closed unchanged; for a new one, a probe file is created in the
    /// directory and removed (SQLite creates its `-wal` and `-shm` files there too). The corresponding C
    /// functions are `stat`, `open`, `unlink`.
    public static func problem(with path: String) -> String? {
        guard !path.isEmpty else { return "must not be empty" }
        var info = stat()
        if stat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                return
                    "`\(path)` is a directory; outbox.path names the database file (e.g. \(join(path, "outbox.sqlite")))"
            case S_IFREG:
                break
            default:
                return "`\(path)` is not a regular file (a FIFO, socket or device); outbox.path names the database file"
            }
            let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else { return "`\(path)` cannot be opened for writing: \(describe(errno))" }
            close(fd)
        } else if errno != ENOENT {
            return errno == ENOTDIR
                ? "`\(directory(of: path))` is not a directory"
                : "`\(path)` cannot be checked: \(describe(errno))"
        }
        let parent = directory(of: path)
        var parentInfo = stat()
        guard stat(parent, &parentInfo) == 0 else {
            // The daemon creates a missing directory whose own parent exists (`createDirectory(for:)`).
            if errno == ENOENT, missingDirectory(for: path) != nil { return nil }
            return errno == ENOENT
                ? "directory `\(parent)` does not exist, nor does its parent (create it, or point outbox.path "
                    + "elsewhere)"
                : "directory `\(parent)` cannot be checked: \(describe(errno))"
        }
        guard parentInfo.st_mode & S_IFMT == S_IFDIR else { return "`\(parent)` is not a directory" }
        let probe = join(parent, ".\(baseName(of: path)).check-\(getpid())")
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return
                "cannot create files in `\(parent)` (the database and its -wal and -shm files go there): \(describe(errno))"
        }
        close(fd)
        unlink(probe)
        return nil
    }

    /// The database's directory when it does not exist but its parent does (`/var/lib/beaconbridge` on a
    /// machine where the package's unit has not run yet): the daemon creates it at start. `creatable`: this
    /// user may create it (write and search permission on the parent). The corresponding C functions are
    /// `stat` and `access`.
    public static func missingDirectory(for path: String) -> (directory: String, creatable: Bool)? {
        let folder = directory(of: path)
        var info = stat()
        guard stat(folder, &info) != 0, errno == ENOENT else { return nil }
        let parent = directory(of: folder)
        guard parent != folder, stat(parent, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return (folder, access(parent, W_OK | X_OK) == 0)
    }

    /// Creates the database's directory (mode 0700: it holds the outbox and region state) when it is missing
    /// and its parent exists; returns why it could not, or nil (also when there was nothing to create). The
    /// corresponding C function is `mkdir`.
    public static func createDirectory(for path: String) -> String? {
        guard let missing = missingDirectory(for: path) else { return nil }
        guard mkdir(missing.directory, 0o700) == 0 || errno == EEXIST else {
            return "cannot create the directory `\(missing.directory)`: \(describe(errno))"
        }
        return nil
    }

    /// True when `path` holds bytes that are not an SQLite database header (an empty or absent file is not
    /// damaged: SQLite starts a new database in it).
    public static func lacksDatabaseHeader(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        return count < 16 || header != Array("SQLite format 3\0".utf8)
    }

    /// Creates the file with mode 0600 (owner only, whatever the umask) when it does not exist, so SQLite,
    /// which gives its `-wal` and `-shm` files the database file's mode, keeps all three private. An existing
    /// file is left as it is. Never follows a symbolic link planted at a new path.
    static func createPrivately(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        fchmod(fd, 0o600)
        close(fd)
    }

    /// Moves a damaged database and its `-wal`/`-shm` files aside as `PATH.damaged-YYYYMMDDTHHMMSSZ` (kept for
    /// inspection, never deleted); returns the new name of the main file. `unixTime` names it.
    /// `label` names why (`damaged`, `replaced`, `truncated`).
    public static func moveAside(_ path: String, unixTime: Double, label: String = "damaged") throws(SQLiteError)
        -> String
    {
        var target = path + ".\(label)-" + stamp(unixTime)
        var attempt = 1
        while access(target, F_OK) == 0 {
            attempt += 1
            target = path + ".\(label)-" + stamp(unixTime) + "-\(attempt)"
        }
        guard rename(path, target) == 0 else {
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "cannot move the \(label) database aside to \(target): \(describe(errno))",
                path: path)
        }
        for suffix in companions where access(path + suffix, F_OK) == 0 {
            _ = rename(path + suffix, target + suffix)
        }
        return target
    }

    /// The file's device, inode and size, or nil with `errno` set (`stat`).
    static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size))
    }

    /// Which file a path names, and how long it is.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64

        func isSameFile(as other: FileIdentity) -> Bool { device == other.device && inode == other.inode }
    }

    /// `20261201T133000Z` for a Unix time (UTC).
    static func stamp(_ unixTime: Double) -> String {
        var seconds = time_t(unixTime.isFinite ? unixTime : 0)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    static func baseName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }
}
