import Foundation

/// The `beaconbridge` executable built by `swift build` (the test command builds it before the tests run),
/// and ways to run it as a user would.
public enum BuiltBinary {
    /// The package root, found from this file's path.
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    public static var path: String { packageRoot + "/.build/debug/beaconbridge" }

    /// The Android capture shipped in Tests/Fixtures.
    public static var androidCapture: String { packageRoot + "/Tests/Fixtures/android-horizon74-btsnoop.log" }

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// Standard output split into lines.
        public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// Runs the binary to completion (bounded by `timeout` seconds, then SIGKILL) and collects its output.
    /// Async so that waiting never blocks a thread of the cooperative pool (two threads on a 2-core machine:
    /// two blocked waits stall every other test of the process).
    /// - Parameters:
    ///   - environment: added to this process's environment, or with `cleanEnvironment` to `PATH` only.
    ///   - directory: the working directory (default: this process's).
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], cleanEnvironment: Bool = false,
        directory: String? = nil, timeout: Double = 120
    ) async throws -> Result {
        let process = try DaemonProcess(
            arguments: arguments, environment: environment,
            cleanEnvironment: cleanEnvironment, directory: directory)
        var status = await process.waitForExit(timeout: timeout)
        if status == nil {
            process.signal(SIGKILL)
            status = await process.waitForExit(timeout: 30)
        }
        let final = status ?? -1
        return Result(status: final, stdout: process.stdout, stderr: process.stderr)
    }
}

/// The binary running in the background, with its output going to files, for signal and lifecycle tests.
/// Started through `ChildProcess` (posix_spawn with a clean signal mask: the test runner blocks SIGTERM).
public final class DaemonProcess: @unchecked Sendable {
    private let child: ChildProcess
    private let directory: String

    /// - Parameter standardInput: an open descriptor to become the binary's standard input (e.g. a socket).
    public init(
        arguments: [String], environment: [String: String] = [:], cleanEnvironment: Bool = false,
        directory workingDirectory: String? = nil, standardInput: Int32? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: BuiltBinary.path) else {
            throw TestFailure("\(BuiltBinary.path) is missing: run `swift build --build-tests` (or `make test`) first")
        }
        directory = try TestDirectory.make(prefix: "bb-run")
        var environment = environment
        // Not under systemd, whatever the test runner's environment says.
        environment["NOTIFY_SOCKET"] = environment["NOTIFY_SOCKET"] ?? ""
        environment["WATCHDOG_USEC"] = environment["WATCHDOG_USEC"] ?? ""
        child = try ChildProcess(
            BuiltBinary.path, arguments, environment: environment,
            outputFiles: (directory + "/stdout", directory + "/stderr"),
            directory: workingDirectory, cleanEnvironment: cleanEnvironment,
            standardInput: standardInput)
    }

    public var pid: Int32 { child.pid }
    public var isRunning: Bool { child.isRunning }
    public var stdout: String { (try? String(contentsOfFile: directory + "/stdout", encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }

    public func signal(_ number: Int32) {
        if child.isRunning { kill(child.pid, number) }
    }

    /// The exit status, or nil if still running after `timeout` seconds. A death by signal is 128 + signal.
    public func waitForExit(timeout: Double) async -> Int32? {
        guard await child.exited(within: timeout) else { return nil }
        let status = child.wait()
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    deinit {
        child.terminate(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
