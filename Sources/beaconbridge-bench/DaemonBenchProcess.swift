import Foundation

/// A child process of the daemon bench (broker, subscriber, gateway) and its CPU time and resident memory,
/// read from `/proc/<pid>/stat` (utime + stime) or its one thread's `schedstat`, and `/proc/<pid>/statm`
/// (resident pages).
final class DaemonBenchProcess {
    let name: String
    private let process = Process()

    /// Starts `executable` with `arguments`; stdout and stderr go to the given files (or nowhere).
    /// `stdin`: an open descriptor to hand over as the child's standard input (e.g. a socket), else /dev/null.
    init(
        _ name: String, executable: String, arguments: [String], stdin: Int32? = nil, stdout: String? = nil,
        stderr: String? = nil
    ) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        environment.removeValue(forKey: "WATCHDOG_USEC")
        process.environment = environment
        process.standardInput =
            stdin.map { FileHandle(fileDescriptor: $0, closeOnDealloc: false) } ?? FileHandle.nullDevice
        process.standardOutput = try Self.handle(stdout)
        process.standardError = try Self.handle(stderr)
        try process.run()
    }

    private static func handle(_ path: String?) throws -> FileHandle {
        guard let path else { return FileHandle.nullDevice }
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw BenchFailure("cannot create \(path)")
        }
        return handle
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// CPU seconds (user + system) so far; nil once the process is gone. A single-threaded process (the
    /// subscriber, the broker) is read from its thread's `schedstat` (nanoseconds of run time): at 100 messages a
    /// second `mosquitto_sub` spends a few clock ticks in a whole window, so tick counts made its figure, and the
    /// gateway-to-subscriber ratio, jump by a third between runs. A process with several threads is read from
    /// `stat` (utime + stime in clock ticks), which also counts threads that have exited.
    var cpuSeconds: Double? {
        if let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"),
            threads.count == 1, let seconds = runSeconds(thread: threads[0])
        {
            return seconds
        }
        return tickSeconds
    }

    /// The run time of every live thread (`schedstat`, nanoseconds), by thread id; nil once the process is gone.
    /// Exact where `cpuSeconds`' clock ticks are not: at 100 reports a second the gateway spends about 0.5 ms a
    /// second, so a 22 s window holds about one tick a second of its CPU and the ticks moved its per-report figure
    /// in steps of 5 µs (10 %). `LiveBench.threadCPU` sums these over a window's samples.
    var threadRunTimes: [String: Double]? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty
        else { return nil }
        var times: [String: Double] = [:]
        for thread in threads {
            // A thread that ended meanwhile is left out (`threadCPU` counts it up to its last reading).
            guard let seconds = runSeconds(thread: thread) else { continue }
            times[thread] = seconds
        }
        return times
    }

    /// One thread's run time in seconds (the first field of its `schedstat`, nanoseconds); nil once it is gone.
    private func runSeconds(thread: String) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8),
            let first = text.split(separator: " ").first, let nanoseconds = Double(first)
        else { return nil }
        return nanoseconds / 1e9
    }

    /// CPU seconds from `/proc/<pid>/stat` (utime + stime, clock ticks); nil once the process is gone.
    private var tickSeconds: Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after "(comm)": state is field 3, utime field 14, stime field 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident set size in bytes; nil once the process is gone.
    var residentBytes: Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Waits up to `timeout` seconds for the exit; the status, or nil if still running.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline { return nil }
            usleep(20_000)
        }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL after `grace` seconds.
    func stop(grace: Double = 5) {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        if waitForExit(timeout: grace) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }

    deinit { stop(grace: 1) }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
