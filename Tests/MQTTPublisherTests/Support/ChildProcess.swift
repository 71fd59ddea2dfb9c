import Foundation

/// A child process started with `posix_spawn` and a clean signal mask. (The test runner blocks SIGTERM and
/// others in its threads; a child started by Foundation's `Process` inherits that mask and ignores SIGTERM.)
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], quiet: Bool = true) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if quiet {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child = pid_t()
        var environmentLines = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        environmentLines.sort()
        let envp: [UnsafeMutablePointer<CChar>?] = environmentLines.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw TestFailure("posix_spawn \(executable) failed: \(String(cString: strerror(rc)))") }
        pid = child
    }

    var isRunning: Bool {
        lock.withLock {
            if exitStatus != nil { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status; return false }
            return true
        }
    }

    /// Sends `signal` and reaps the child (SIGKILL after 10 s if it has not exited).
    func terminate(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        for _ in 0..<1000 {
            if !isRunning { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        _ = wait()
    }

    /// Waits for the exit and returns the raw wait status.
    @discardableResult
    func wait() -> Int32 {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = status
            return status
        }
    }
}
