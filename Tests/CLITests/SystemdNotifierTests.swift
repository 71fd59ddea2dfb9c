import Testing

@testable import BeaconBridgeCLI

#if canImport(Glibc)
import Glibc
#endif

/// A real AF_UNIX datagram socket bound by the test, standing in for systemd's notify socket.
final class NotifySocket {
    let fd: Int32
    let name: String  // as NOTIFY_SOCKET would give it
    private let directory: String?

    /// `abstract`: an abstract-namespace name (`@...`), else a path in a fresh temporary directory.
    init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes: [UInt8]
        if abstract {
            directory = nil
            name = "@beaconbridge-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            bytes = Array(name.utf8)
            bytes[0] = 0
        } else {
            var template = Array("/tmp/beaconbridge-notify-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            try #require(made != nil)
            let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            directory = dir
            name = dir + "/notify"
            bytes = Array(name.utf8)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(
            MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + bytes.count
                + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        try #require(bound == 0, "bind failed: errno \(errno)")
    }

    deinit {
        close(fd)
        if let directory {
            unlink(directory + "/notify")
            rmdir(directory)
        }
    }

    /// The next datagram if one is queued (never blocks).
    func receiveNow() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return n >= 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }

    /// Waits for a datagram, polling at most `attempts` times 10 ms apart.
    func receive(attempts: Int = 500) async -> String? {
        for _ in 0..<attempts {
            if let message = receiveNow() { return message }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}

@Suite struct SystemdNotifierTests {
    @Test(arguments: [false, true])
    func messagesArriveAsDatagrams(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.name]))
        try notifier.ready(status: "scanning hci0\nline two")
        #expect(socket.receiveNow() == "READY=1\nSTATUS=scanning hci0 line two")
        try notifier.status("3 beacons")
        #expect(socket.receiveNow() == "STATUS=3 beacons")
        try notifier.reloading()
        #expect(socket.receiveNow() == "RELOADING=1")
        try notifier.stopping()
        #expect(socket.receiveNow() == "STOPPING=1")
        try notifier.watchdog()
        #expect(socket.receiveNow() == "WATCHDOG=1")
        #expect(socket.receiveNow() == nil)
    }

    @Test func absentSocketMeansNoNotifier() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
    }

    @Test func unreachableOrInvalidSocketIsAnError() {
        #expect(throws: SystemdNotifyError.self) {
            try SystemdNotifier(socketName: "/nonexistent-dir/notify").ready()
        }
        #expect(throws: SystemdNotifyError.self) { try SystemdNotifier(socketName: "vsock:2:1234").ready() }
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: SystemdNotifyError.self) { try SystemdNotifier(socketName: long).ready() }
    }

    @Test func watchdogEnvironment() {
        let base = ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000"]
        #expect(SystemdWatchdog(environment: base, pid: 42)?.interval == .seconds(15))
        #expect(SystemdWatchdog(environment: base.merging(["WATCHDOG_PID": "42"]) { $1 }, pid: 42) != nil)
        #expect(SystemdWatchdog(environment: base.merging(["WATCHDOG_PID": "41"]) { $1 }, pid: 42) == nil)
        #expect(SystemdWatchdog(environment: ["WATCHDOG_USEC": "30000000"], pid: 42) == nil)
        #expect(SystemdWatchdog(environment: base.merging(["WATCHDOG_USEC": "0"]) { $1 }, pid: 42) == nil)
        #expect(SystemdWatchdog(environment: base.merging(["WATCHDOG_USEC": "soon"]) { $1 }, pid: 42) == nil)
    }

    @Test func watchdogPingsOnlyWhenHealthy() throws {
        let socket = try NotifySocket(abstract: true)
        let watchdog = try #require(
            SystemdWatchdog(environment: [
                "NOTIFY_SOCKET": socket.name,
                "WATCHDOG_USEC": "2000000",
            ]))
        #expect(try watchdog.beat(isHealthy: false) == false)
        #expect(socket.receiveNow() == nil)
        #expect(try watchdog.beat(isHealthy: true) == true)
        #expect(socket.receiveNow() == "WATCHDOG=1")
    }

    @Test func watchdogLoopKeepsPingingUntilCancelled() async throws {
        let socket = try NotifySocket(abstract: false)
        let watchdog = try #require(
            SystemdWatchdog(environment: [
                "NOTIFY_SOCKET": socket.name,
                "WATCHDOG_USEC": "20000",
            ]))
        let loop = Task { await watchdog.run(isHealthy: { true }) }
        let first = await socket.receive()
        let second = await socket.receive()
        loop.cancel()
        await loop.value
        #expect(first == "WATCHDOG=1")
        #expect(second == "WATCHDOG=1")
    }
}
