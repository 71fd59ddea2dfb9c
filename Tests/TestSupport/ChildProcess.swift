import BeaconRuntime
import Foundation

/// A child process started with `posix_spawn` and a clean signal mask. (The test runner blocks SIGTERM and
/// others in its threads; a child started by Foundation's `Process` inherits that mask and ignores SIGTERM.)
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// - Parameters:
    ///   - quiet: send stdout and stderr to /dev/null (ignored for a stream given a file in `outputFiles`).
    ///   - outputFiles: files for stdout and stderr (created or truncated).
    ///   - directory: working directory of the child.
    ///   - cleanEnvironment: start from `PATH` only instead of this process's environment.
    ///   - standardInput: an open descriptor to become the child's standard input (e.g. a socket).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], quiet: Bool = true,
        outputFiles: (stdout: String, stderr: String)? = nil, directory: String? = nil,
        cleanEnvironment: Bool = false, standardInput: Int32? = nil
    ) throws {
        var actions: [ProcessSpawn.FileAction] = []
        if let standardInput { actions.append(.duplicate(standardInput, onto: 0)) }
        if let outputFiles {
            actions.append(.open(fd: 1, path: outputFiles.stdout, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644))
            actions.append(.open(fd: 2, path: outputFiles.stderr, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644))
        } else if quiet {
            actions.append(.open(fd: 1, path: "/dev/null", flags: O_WRONLY))
            actions.append(.open(fd: 2, path: "/dev/null", flags: O_WRONLY))
        }
        // A working directory goes through `sh -c 'cd DIR && exec ...'` (posix_spawn's chdir action is not
        // visible to Swift on this libc).
        let command = directory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, executable] } ?? [executable]
        let base = cleanEnvironment ? ["PATH": "/usr/bin:/bin"] : ProcessInfo.processInfo.environment
        var environmentLines = base.merging(environment) { $1 }.map { "\($0)=\($1)" }
        environmentLines.sort()
        let child: pid_t
        switch ProcessSpawn.start(
            command[0], arguments: Array(command.dropFirst()) + arguments, environment: environmentLines,
            actions: actions)
        {
        case let .success(started): child = started
        case let .failure(failure): throw TestFailure("\(failure) (\(executable))")
        }
        pid = child
    }

    public var isRunning: Bool {
        lock.withLock {
            if exitStatus != nil { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exitStatus = status
                return false
            }
            return true
        }
    }

    /// Sends `signal` and reaps the child (SIGKILL after 10 s if it has not exited).
    public func terminate(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        for _ in 0..<1000 {
            if !isRunning { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        _ = wait()
    }

    /// Polls (every 10 ms, without blocking a thread of the cooperative pool) until the child has exited or
    /// `timeout` seconds have passed; true if it exited.
    public func exited(within timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Waits for the exit and returns the raw wait status.
    @discardableResult
    public func wait() -> Int32 {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = status
            return status
        }
    }
}
