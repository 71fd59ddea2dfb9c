import Foundation
import TestSupport

/// A private mosquitto on a free loopback port for the benches, configured in the bench's temp dir; its
/// process is sampled like the others (CPU, RSS).
final class BenchBroker {
    let port: Int
    let process: DaemonBenchProcess

    init(directory: String) throws {
        port = try FreePort.find()
        let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
        let config = """
            user \(user)
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence false
            max_queued_messages 0
            max_inflight_messages 0
            log_dest file \(directory)/mosquitto.log

            """
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        process = try DaemonBenchProcess(
            "mosquitto", executable: "/usr/sbin/mosquitto", arguments: ["-c", directory + "/mosquitto.conf"])
        for _ in 0..<200 where !FreePort.accepts(port) { usleep(50_000) }
        guard FreePort.accepts(port) else { throw BenchFailure("mosquitto did not start on 127.0.0.1:\(port)") }
    }

    func stop() { process.stop() }

    deinit { process.stop() }
}
