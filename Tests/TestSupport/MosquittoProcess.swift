import Foundation

/// A real `mosquitto` broker on a free loopback port, configured by a generated file in a temp dir.
/// Stop and restart keep the port, so clients can reconnect to "the same broker".
public final class MosquittoProcess: @unchecked Sendable {
    public let directory: String
    public let port: Int
    public let extraConfig: String
    private let lock = NSLock()
    private var process: ChildProcess?

    public static let executable = "/usr/sbin/mosquitto"

    /// - Parameter extraConfig: lines appended to the listener's configuration (TLS, authentication).
    /// - Parameter persistent: keep sessions and queued messages across `stop()` / `start()`; QoS 0 messages are
    ///   queued for offline persistent sessions as well (`queue_qos0_messages`).
    public init(extraConfig: String = "", persistent: Bool = false, allowAnonymous: Bool = true) throws {
        directory = try TestDirectory.make(prefix: "bb-mosquitto")
        port = try FreePort.find()
        self.extraConfig = extraConfig
        var config = """
            user root
            per_listener_settings false
            allow_anonymous \(allowAnonymous)
            log_dest file \(directory)/mosquitto.log
            log_type error
            log_type warning
            log_type notice
            max_queued_messages 0
            max_inflight_messages 0
            listener \(port) 127.0.0.1

            """
        if persistent {
            // QoS 0 messages are queued for an offline persistent subscriber too: after a restart the gateway's
            // publisher often reconnects before a test's subscriber, and mosquitto would otherwise drop the QoS 0
            // sightings published in between (a DiskFullRecoveryTests flake: 150 sightings of 600 missing).
            config += "persistence true\npersistence_location \(directory)/\nautosave_interval 1\n"
            config += "queue_qos0_messages true\n"
        } else {
            config += "persistence false\n"
        }
        config += extraConfig + "\n"
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    public var log: String { (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? "" }

    /// Starts the broker and waits (up to 60 s, polling without blocking a cooperative thread) until it
    /// accepts connections.
    ///
    /// The broker is asked once more after the last sleep: a waiting task that could not run for the whole minute
    /// (the cooperative pool held by CPU-bound tests) must not report a broker that started meanwhile as failed.
    /// Its standard error goes to `mosquitto.stderr` in the directory (what it prints before its log file is open,
    /// such as a port in use), and a failure carries that, the exit status and the log.
    public func start() async throws {
        let process = try ChildProcess(
            MosquittoProcess.executable, ["-c", directory + "/mosquitto.conf"],
            outputFiles: (stdout: directory + "/mosquitto.stdout", stderr: directory + "/mosquitto.stderr"))
        lock.withLock { self.process = process }
        let deadline = Date().addingTimeInterval(60)
        while true {
            if FreePort.accepts(port) { return }
            guard process.isRunning, Date() < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let stderr = (try? String(contentsOfFile: directory + "/mosquitto.stderr", encoding: .utf8)) ?? ""
        let state = process.isRunning ? "still running" : "exited with status \(process.wait())"
        throw TestFailure(
            "mosquitto did not start on port \(port) within 60 s (\(state)); stderr:\n\(stderr)\nlog:\n\(log)")
    }

    /// Stops with SIGTERM (a clean shutdown that saves persistent sessions) and waits for the exit.
    public func stop() { signalAndWait(SIGTERM) }

    /// Freezes (SIGSTOP) / thaws (SIGCONT) the broker: connections stay open, nothing is acknowledged.
    public func pause() { lock.withLock { process }.map { _ = Foundation.kill($0.pid, SIGSTOP) } }
    public func resume() { lock.withLock { process }.map { _ = Foundation.kill($0.pid, SIGCONT) } }

    /// Stops with SIGKILL.
    public func kill() { signalAndWait(SIGKILL) }

    private func signalAndWait(_ signal: Int32) {
        guard
            let process = lock.withLock({ () -> ChildProcess? in
                defer { self.process = nil }
                return self.process
            })
        else { return }
        process.terminate(signal)
    }

    deinit {
        signalAndWait(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum FreePort {
    /// A port on 127.0.0.1 that is free now, picked at random below the kernel's ephemeral range
    /// (net.ipv4.ip_local_port_range, 32768-60999 by default). A port the kernel hands out for `bind(0)` comes
    /// from that range, and so does the local port of every outgoing connection: with hundreds of tests
    /// connecting at once, such a port could be taken by someone's connection before the broker bound it
    /// ("Address already in use", seen once in a clean-clone CI run). Ports below the range are only ever taken
    /// by explicit listeners, which all pick here at random and check that the port binds.
    public static func find() throws -> Int {
        let low = ephemeralRangeStart()
        let candidates = low > 12_000 ? 10_000..<(low - 1) : nil
        for _ in 0..<200 {
            guard let candidates else { break }
            let port = Int.random(in: candidates)
            if (try? bindable(port)) == port { return port }
        }
        return try bindable(0)
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    static func ephemeralRangeStart() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32_768
    }

    /// Binds `port` (0: any) on 127.0.0.1 and releases it; returns the port bound. The probe is close-on-exec:
    /// a child another test spawned while it was open kept it, bound, for its whole life, and the broker later
    /// started on that port failed with "Address already in use" (seen in ReplayRestartTests, BrokerOutageTests).
    static func bindable(_ port: Int) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw TestFailure("bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
