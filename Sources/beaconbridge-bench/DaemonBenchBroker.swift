import Foundation

/// A private mosquitto on a free loopback port for the daemon bench, configured in the bench's temp dir.
final class DaemonBenchBroker {
    let port: Int
    let process: DaemonBenchProcess

    init(directory: String) throws {
        port = try Self.freePort()
        let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
        let config = """
            user \(user)
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence false
            max_queued_messages 0
            log_dest file \(directory)/mosquitto.log

            """
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        process = try DaemonBenchProcess("mosquitto", executable: "/usr/sbin/mosquitto", arguments: ["-c", directory + "/mosquitto.conf"])
        for _ in 0..<200 where !Self.accepts(port) { usleep(50_000) }
        guard Self.accepts(port) else { throw BenchFailure("mosquitto did not start on 127.0.0.1:\(port)") }
    }

    deinit { process.stop() }

    /// A port the kernel hands out on 127.0.0.1 (bound, read back, released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BenchFailure("bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
