import Foundation

/// A TCP peer written in Python for a test that needs a broker misbehaving in a way mosquitto never does
/// (answering CONNECT with an HTTP page, declaring a huge packet). The script is written to
/// `<directory>/peer.py` and started with the port file as its first argument (then `arguments`); it must bind
/// 127.0.0.1 port 0 and write the port it listens on to `<port file>.tmp`, then rename it to the port file, so
/// the file never holds a partial number.
public final class PythonPeer: Sendable {
    public let port: Int
    private let process: ChildProcess

    private init(port: Int, process: ChildProcess) {
        self.port = port
        self.process = process
    }

    /// Starts the script and waits (up to 60 s, without blocking a thread of the pool) until it listens.
    public static func start(script: String, in directory: String, arguments: [String] = []) async throws
        -> PythonPeer
    {
        try script.write(toFile: directory + "/peer.py", atomically: true, encoding: .utf8)
        let portFile = directory + "/port"
        let process = try ChildProcess("/usr/bin/python3", [directory + "/peer.py", portFile] + arguments)
        do {
            try await waitUntil("the Python peer listening", timeout: 60) {
                FileManager.default.fileExists(atPath: portFile) || !process.isRunning
            }
            guard let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) else {
                throw TestFailure("the Python peer ended or wrote no port to \(portFile)")
            }
            return PythonPeer(port: port, process: process)
        } catch {
            process.terminate(SIGKILL)
            throw error
        }
    }

    public func stop() { process.terminate(SIGKILL) }

    /// True once the script has ended by itself (within `timeout` seconds).
    public func exited(within timeout: Double) async -> Bool { await process.exited(within: timeout) }
}
