import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// The one way the gateway, its tests and its benches start a child process: `posix_spawn` with an empty signal
/// mask and the default action for the signals a parent may ignore or block (the daemon ignores SIGTERM, SIGINT
/// and SIGHUP for `SignalStream`), so the child can be ended with SIGTERM like any process. The child inherits
/// descriptors 0-2 only (after the file actions, everything from 3 up is closed: glibc's
/// `posix_spawn_file_actions_addclosefrom_np`), whether or not a descriptor of this process was close-on-exec.
public enum ProcessSpawn {
    /// A file action, applied in order before the child runs. Only descriptors 0-2 survive into the child.
    public enum FileAction: Sendable {
        /// Opens `path` as descriptor `fd` (`O_*` flags; `mode` when creating).
        case open(fd: Int32, path: String, flags: Int32, mode: mode_t = 0)
        /// Duplicates `source` onto `fd`.
        case duplicate(Int32, onto: Int32)
    }

    /// Why a child could not be started: posix_spawn's error number.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let executable: String
        public let errno: Int32
        public var description: String { "posix_spawn \(executable): \(String(cString: strerror(errno)))" }
    }

    static let defaultedSignals = [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2]

    /// Starts `executable` (a path; no PATH search) with `arguments` (argv[1...]); `environment` as
    /// `NAME=value` lines, nil to inherit this process's. Returns the child's pid.
    public static func start(
        _ executable: String, arguments: [String], environment: [String]? = nil, actions: [FileAction] = []
    ) -> Result<pid_t, Failure> {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultedSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        for action in actions {
            switch action {
            case let .open(fd, path, flags, mode): posix_spawn_file_actions_addopen(&fileActions, fd, path, flags, mode)
            case let .duplicate(source, fd): posix_spawn_file_actions_adddup2(&fileActions, source, fd)
            }
        }
        bb_spawn_addclosefrom(&fileActions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var child = pid_t()
        let result =
            if let envp {
                posix_spawn(&child, executable, &fileActions, &attributes, argv, envp)
            } else {
                posix_spawn(&child, executable, &fileActions, &attributes, argv, environ)
            }
        guard result == 0 else { return .failure(Failure(executable: executable, errno: result)) }
        return .success(child)
    }
}
