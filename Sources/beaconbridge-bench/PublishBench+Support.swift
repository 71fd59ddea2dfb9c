import BeaconDelivery
import BeaconModel
import MQTTPublisher
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

// Support for PublishBench: a counting subscriber, child processes, temp files.
// Nested in PublishBench so the names cannot clash with other areas' bench files.
extension PublishBench {
    /// Counts messages under a topic prefix (and optionally records capture-to-receive latency).
    final class BenchSubscriber: Sendable {
        struct State {
            var prefix = ""
            var count = 0
            var first = 0.0
            var last = 0.0
            var latencies: [Double] = []
            var connected = false
        }

        final class Shared: Sendable {
            let mutex = Mutex(State())
            func withLock<T>(_ body: (inout State) -> T) -> T { mutex.withLock { body(&$0) } }
        }

        let client: MQTTClient
        let state = Shared()

        init(port: Int, pattern: String, recordLatency: Bool = false) throws {
            let state = self.state
            let settings = MQTTSettings(host: "127.0.0.1", port: port, reconnectMin: 0.05, reconnectMax: 0.5)
            let box = ClientBox()
            client = try MQTTClient(
                options: MQTTClientOptions(settings: settings, clientID: "bench-sub-\(port)-\(recordLatency)")
            ) { event in
                switch event {
                case .connected:
                    box.client?.subscribe(pattern, qos: 1)
                    box.client?.subscribe("bench/#", qos: 1)
                    box.client?.subscribe("beaconbridge/#", qos: 1)
                    state.withLock { $0.connected = true }
                case let .message(topic, payload):
                    let received = SystemClock.realtime()
                    var latency: Double?
                    if recordLatency, let json = try? JSONValue(parsing: String(decoding: payload, as: UTF8.self)),
                        case let .double(time)? = json["time"]
                    {
                        latency = received - time
                    }
                    state.withLock { state in
                        guard topic.hasPrefix(state.prefix) else { return }
                        if state.count == 0 { state.first = received }
                        state.count += 1
                        state.last = received
                        if let latency { state.latencies.append(latency) }
                    }
                default: break
                }
            }
            box.client = client
        }

        func start() async throws {
            client.start()
            _ = await PublishBench.waitFor(seconds: 10) { state.withLock { $0.connected } }
            try await Task.sleep(for: .milliseconds(200))
        }

        var count: Int { state.withLock { $0.count } }
        var latencies: [Double] { state.withLock { $0.latencies } }

        /// Messages per second from the start of `body` to the arrival of the `expected`-th message.
        func measure(expected: Int, topicPrefix: String = "bench/", _ body: () async throws -> Void) async throws
            -> Double
        {
            if !state.withLock({ $0.connected }) { try await start() }
            state.withLock { $0 = State(prefix: topicPrefix, connected: true) }
            let start = SystemClock.realtime()
            try await body()
            _ = await PublishBench.waitFor(seconds: 60) { count >= expected }
            let (received, last) = state.withLock { ($0.count, $0.last) }
            guard received >= expected else {
                say("  (subscriber got \(received) of \(expected) messages)")
                return .nan
            }
            return Double(expected) / (last - start)
        }

        func stop() async { await client.stop() }
    }

    /// Lets the subscriber's callback reach its own client (set once before `start()`).
    final class ClientBox: @unchecked Sendable {
        // Written once before the client starts, read only afterwards on its network thread.
        var client: MQTTClient?
    }

    enum BenchProcess {
        /// posix_spawn with a clean signal mask and stdout/stderr to /dev/null.
        static func spawn(_ executable: String, _ arguments: [String], stdin: String? = nil) throws -> pid_t {
            var actions: [ProcessSpawn.FileAction] = []
            if let stdin { actions.append(.open(fd: 0, path: stdin, flags: O_RDONLY)) }
            actions.append(.open(fd: 1, path: "/dev/null", flags: O_WRONLY))
            actions.append(.open(fd: 2, path: "/dev/null", flags: O_WRONLY))
            let pid: pid_t
            switch ProcessSpawn.start(executable, arguments: arguments, actions: actions) {
            case let .success(started): pid = started
            case let .failure(failure): throw BenchError("cannot start \(executable): \(failure)")
            }
            return pid
        }

        /// Runs to completion; returns the exit code.
        @discardableResult
        static func run(_ executable: String, _ arguments: [String], stdin: String? = nil) throws -> Int32 {
            let pid = try spawn(executable, arguments, stdin: stdin)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return (status >> 8) & 0xFF
        }
    }

    enum BenchFiles {
        static func temporaryDirectory() throws -> String { try TestDirectory.make(prefix: "bb-bench") }

        static func write(_ text: String, to path: String) throws {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw BenchError("cannot write \(path)") }
            defer { close(fd) }
            guard FileDescriptorWrite.all(fd, text) == 0 else { throw BenchError("write \(path) failed") }
        }

        static func read(_ path: String) throws -> String {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw BenchError("cannot read \(path)") }
            defer { close(fd) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        static func remove(_ directory: String) {
            _ = try? BenchProcess.run("/bin/rm", ["-rf", directory])
        }
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
