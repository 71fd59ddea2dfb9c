import BeaconRuntime
import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Announces the proxy as `_esphomelib._tcp` through avahi-daemon with a supervised `avahi-publish-service`
/// child (package avahi-utils), for as long as the proxy runs. The child registers the service over D-Bus and
/// prints (on stderr, read here through a pipe) "Established under name 'NAME'" once avahi-daemon announces
/// it: only then is `.announced` reported. When the child ends (avahi-daemon not running yet, the system bus
/// refusing the connection, avahi-daemon restarting) or reports "Failed to register", `.failed` carries its
/// last line and the child is started again after 2 s, doubling to 5 minutes (back to 2 s after an
/// announcement that held for a minute). Everything blocking (poll, read, waitpid) runs on one dedicated
/// thread, never on the Swift concurrency pool. The tool is looked up on `PATH` (tests put a fake one first).
public final class AvahiPublisher: Sendable {
    public static let toolName = "avahi-publish-service"
    static let firstRetrySeconds = 2
    static let maxRetrySeconds = 300
    static let stableSeconds = 60.0

    private let arguments: [String]
    private let environment: [String]
    private let searchPath: String
    private let counters: ESPHomeProxyCounters?
    private let notify: @Sendable (MDNSNotice) -> Void
    /// Written by `stop`, polled by the thread beside the child's output.
    private let stopPipe: Mutex<(read: Int32, write: Int32)?> = Mutex(nil)
    private let finished = Atomic<Bool>(false)

    /// - Parameters:
    ///   - environment: the daemon's environment; the child gets only `PATH`, `DBUS_SYSTEM_BUS_ADDRESS` when
    ///     set, and `LC_ALL=C` (its messages are translated otherwise, and never the daemon's secrets).
    ///   - counters: `mdnsAnnounced` and `mdnsFailures` are kept there (telemetry).
    public init(
        name: String, port: Int, txt: [String], environment: [String: String], counters: ESPHomeProxyCounters?,
        notify: @escaping @Sendable (MDNSNotice) -> Void
    ) {
        // `--`: a name or record starting with `-` is not an option.
        arguments = ["--", name, MDNSAnnouncement.serviceType, String(port)] + txt
        searchPath = environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        var childEnvironment = ["LC_ALL=C", "PATH=" + searchPath]
        if let bus = environment["DBUS_SYSTEM_BUS_ADDRESS"] {
            childEnvironment.append("DBUS_SYSTEM_BUS_ADDRESS=" + bus)
        }
        self.environment = childEnvironment
        self.counters = counters
        self.notify = notify
    }

    /// The first executable `avahi-publish-service` in the absolute directories of `path`.
    static func locate(in path: String) -> String? {
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = directory + "/" + toolName
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Starts the supervising thread; without the tool (or a thread) reports `.unavailable` and does nothing.
    public func start() {
        guard let tool = Self.locate(in: searchPath) else {
            finished.store(true, ordering: .releasing)
            notify(.unavailable(reason: "\(Self.toolName) is not on PATH \(searchPath) (package avahi-utils)"))
            return
        }
        guard let fds = Self.closeOnExecPipe() else {
            finished.store(true, ordering: .releasing)
            notify(.unavailable(reason: "pipe: \(String(cString: strerror(errno)))"))
            return
        }
        stopPipe.withLock { $0 = fds }
        let code = DedicatedThread.start { [self] in
            supervise(tool: tool, stopFD: fds.read)
            finished.store(true, ordering: .releasing)
        }
        if code != 0 {
            finished.store(true, ordering: .releasing)
            notify(.unavailable(reason: "pthread_create: \(String(cString: strerror(code)))"))
        }
    }

    /// Ends the announcement: the thread sends the child SIGTERM and reaps it (at most ~4 s, then SIGKILL).
    /// Waits without blocking a thread of the pool.
    public func stop() async {
        let pipe = stopPipe.withLock { $0 }
        guard let pipe else { return }
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)
        for _ in 0..<500 where !finished.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if finished.load(ordering: .acquiring) {
            stopPipe.withLock { $0 = nil }
            close(pipe.read)
            close(pipe.write)
        }
    }

    private func supervise(tool: String, stopFD: Int32) {
        var failures = 0
        while true {
            guard let outcome = runChild(tool: tool, stopFD: stopFD) else { return }
            if let held = outcome.announcedFor, held >= Self.stableSeconds { failures = 0 }
            failures += 1
            let delay = min(Self.maxRetrySeconds, Self.firstRetrySeconds << min(failures - 1, 16))
            counters?.mdnsFailures.add(1, ordering: .relaxed)
            notify(.failed(reason: outcome.reason, attempt: failures, retryIn: delay))
            var poller = pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)
            let deadline = SystemClock.monotonic() + Double(delay)
            while SystemClock.monotonic() < deadline {
                let left = Int32(max(1, min(1000, (deadline - SystemClock.monotonic()) * 1000)))
                if poll(&poller, 1, left) > 0 { return }
            }
        }
    }

    /// Runs one child until it ends (its reason and how long it was announced) or until `stop` (nil).
    private func runChild(tool: String, stopFD: Int32) -> (reason: String, announcedFor: Double?)? {
        guard let pipe = Self.closeOnExecPipe() else {
            return ("pipe: \(String(cString: strerror(errno)))", nil)
        }
        let output = [pipe.read, pipe.write]
        let child: pid_t
        switch spawn(tool: tool, output: output[1]) {
        case let .success(pid): child = pid
        case let .failure(failure):
            close(output[0])
            close(output[1])
            return (failure.description, nil)
        }
        close(output[1])
        defer { close(output[0]) }
        var pending: [UInt8] = []
        var lastLine: String?
        var announcedAt: Double?
        var buffer = [UInt8](repeating: 0, count: 4096)
        reading: while true {
            var fds = [
                pollfd(fd: output[0], events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                lastLine = "poll: \(String(cString: strerror(errno)))"
                kill(child, SIGTERM)
                break
            }
            if fds[1].revents != 0 {
                Self.reap(child, terminate: true)
                counters?.mdnsAnnounced.store(0, ordering: .relaxed)
                return nil
            }
            guard fds[0].revents != 0 else { continue }
            let count = read(output[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = Self.text(pending[..<newline])
                pending.removeSubrange(...newline)
                guard !line.isEmpty else { continue }
                lastLine = line
                if let name = Self.establishedName(line) {
                    announcedAt = SystemClock.monotonic()
                    counters?.mdnsAnnounced.store(1, ordering: .relaxed)
                    notify(.announced(name: name))
                } else if line.hasPrefix("Failed to register") {
                    // The child keeps running after this; end it, and start again later.
                    kill(child, SIGTERM)
                }
            }
            if pending.count > 4096 { pending.removeAll() }
        }
        counters?.mdnsAnnounced.store(0, ordering: .relaxed)
        if !pending.isEmpty { lastLine = Self.text(pending[...]) }
        let status = Self.reap(child, terminate: false)
        let exit = Self.describe(status: status)
        let reason = lastLine.map { "\($0) (\(exit))" } ?? exit
        return (reason, announcedAt.map { SystemClock.monotonic() - $0 })
    }

    /// Starts the tool: stdin /dev/null, stdout and stderr into `output` (ProcessSpawn: clean signal mask and
    /// defaults, so SIGTERM ends it although the daemon ignores SIGTERM).
    private func spawn(tool: String, output: Int32) -> Result<pid_t, ProcessSpawn.Failure> {
        ProcessSpawn.start(
            tool, arguments: arguments, environment: environment,
            actions: [
                .open(fd: 0, path: "/dev/null", flags: O_RDONLY), .duplicate(output, onto: 1),
                .duplicate(output, onto: 2),
            ])
    }

    /// Waits for the child (on this dedicated thread): up to 2 s (after SIGTERM when `terminate`), then SIGKILL.
    @discardableResult
    private static func reap(_ child: pid_t, terminate: Bool) -> Int32 {
        if terminate { kill(child, SIGTERM) }
        var status: Int32 = 0
        for _ in 0..<200 {
            let result = waitpid(child, &status, WNOHANG)
            if result == child || (result < 0 && errno != EINTR) { return status }
            usleep(10_000)
        }
        kill(child, SIGKILL)
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// A pipe whose ends are not inherited by children (the child gets its copy through dup2), close-on-exec
    /// from the start. The corresponding C call is `pipe2`.
    static func closeOnExecPipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [0, 0]
        guard bb_pipe2(&fds, O_CLOEXEC) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    static func describe(status: Int32) -> String {
        let signal = status & 0x7F
        return signal == 0 ? "exit status \((status >> 8) & 0xFF)" : "killed by signal \(signal)"
    }

    /// The instance name of "Established under name 'NAME'", nil for any other line.
    static func establishedName(_ line: String) -> String? {
        let prefix = "Established under name '"
        guard line.hasPrefix(prefix) else { return nil }
        var name = line.dropFirst(prefix.count)
        if name.hasSuffix("'") { name = name.dropLast() }
        return String(name)
    }

    /// A line of the child's output as text: invalid UTF-8 replaced, at most 300 characters.
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        var line = String(decoding: bytes, as: UTF8.self)
        while let last = line.last, last == "\r" || last == " " { line.removeLast() }
        return line.count > 300 ? String(line.prefix(300)) + "..." : line
    }
}
