import Foundation

/// A TCP peer written in Python for a test that needs a broker misbehaving in a way mosquitto never does
/// (answering CONNECT with an HTTP page, declaring a huge packet). The script is written to
/// `<directory>/peer.py` after `prelude` and started with the port file as its first argument (then `arguments`):
/// the prelude listens on a free loopback port as `server` (accept timeout 60 s) and writes the port to the port
/// file through a rename, so the file never holds a partial number; the script only serves.
public final class PythonPeer: Sendable {
    public let port: Int

    /// Imports `socket`, `sys` and `os`; `server` is listening when the script's own lines run.
    static let prelude = """
        import socket, sys, os
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(server.getsockname()[1]))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        server.settimeout(60)

        """
    private let process: ChildProcess

    private init(port: Int, process: ChildProcess) {
        self.port = port
        self.process = process
    }

    /// Starts the script and waits (up to 60 s, without blocking a thread of the pool) until it listens.
    public static func start(script: String, in directory: String, arguments: [String] = []) async throws
        -> PythonPeer
    {
        try (prelude + script).write(toFile: directory + "/peer.py", atomically: true, encoding: .utf8)
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
