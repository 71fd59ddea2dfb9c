import Foundation
import TestSupport

/// A small HTTP(S) server on a free loopback port for the webhook tests (Python's `http.server`): every POST is
/// logged to `<directory>/requests.log` as one JSON line (status, headers of interest, body), and answered 503
/// while `<directory>/refuse` exists, 200 otherwise. With a certificate and key it speaks TLS.
final class WebhookServer: Sendable {
    let port: Int
    let directory: String
    private let process: ChildProcess

    static let script = """
        import http.server, json, os, ssl, sys
        port_file, directory = sys.argv[1], sys.argv[2]

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = 503 if os.path.exists(os.path.join(directory, "refuse")) else 200
                entry = {"status": status, "path": self.path, "auth": self.headers.get("Authorization"),
                         "site": self.headers.get("X-Site"), "type": self.headers.get("Content-Type"),
                         "body": body.decode()}
                with open(os.path.join(directory, "requests.log"), "a") as log:
                    log.write(json.dumps(entry) + "\\n")
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if len(sys.argv) > 4:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[3], sys.argv[4])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        with open(port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(port_file + ".tmp", port_file)
        server.serve_forever()
        """

    private init(port: Int, directory: String, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// Starts the server (TLS with `certificate` and `key`) and waits until it listens (at most 60 s).
    static func start(in directory: String, certificate: String? = nil, key: String? = nil) async throws
        -> WebhookServer
    {
        let scriptPath = directory + "/webhook-server.py"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let portFile = directory + "/webhook-port"
        var arguments = [scriptPath, portFile, directory]
        if let certificate, let key { arguments += [certificate, key] }
        let process = try ChildProcess("/usr/bin/python3", arguments)
        do {
            try await waitUntil("the webhook server listening", timeout: 60) {
                FileManager.default.fileExists(atPath: portFile) || !process.isRunning
            }
            guard let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) else {
                throw TestFailure("the webhook server ended or wrote no port")
            }
            return WebhookServer(port: port, directory: directory, process: process)
        } catch {
            process.terminate(SIGKILL)
            throw error
        }
    }

    func stop() { process.terminate(SIGKILL) }

    /// Answers 503 from now on (`true`) or 200 (`false`).
    func refuse(_ on: Bool) {
        let path = directory + "/refuse"
        if on {
            _ = FileManager.default.createFile(atPath: path, contents: Data())
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    struct Request {
        var status: Int
        var path: String
        var authorization: String?
        var site: String?
        var contentType: String?
        /// The events of the body (a JSON array), as parsed objects.
        var events: [[String: Any]]
    }

    var requests: [Request] {
        guard let text = try? String(contentsOfFile: directory + "/requests.log", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let body = object["body"] as? String
            else { return nil }
            let events = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]]) ?? []
            return Request(
                status: object["status"] as? Int ?? 0, path: object["path"] as? String ?? "",
                authorization: object["auth"] as? String, site: object["site"] as? String,
                contentType: object["type"] as? String, events: events)
        }
    }
}
