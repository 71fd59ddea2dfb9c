import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A raw HTTP/1.1 client over a loopback socket for the status server's tests and the status bench: it sends exactly the bytes it is
/// given (malformed ones too) and reads the response until the server closes, within a time bound.
public enum HTTPTestClient {
    public struct Response: Sendable {
        public let text: String
        public init(text: String) { self.text = text }
        /// The status code of the status line, nil when nothing (or no status line) came back.
        public var status: Int? {
            guard text.hasPrefix("HTTP/1.1 ") else { return nil }
            return Int(text.dropFirst(9).prefix(3))
        }
        public var body: String {
            guard let range = text.range(of: "\r\n\r\n") else { return "" }
            return String(text[range.upperBound...])
        }
        public func header(_ name: String) -> String? {
            for line in text.components(separatedBy: "\r\n\r\n").first?.components(separatedBy: "\r\n") ?? []
            where line.lowercased().hasPrefix(name.lowercased() + ":") {
                return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
            }
            return nil
        }
    }

    /// Sends `bytes` on a new connection to 127.0.0.1:`port` and reads until the server closes or `timeout`
    /// seconds pass.
    public static func exchange(port: Int, _ bytes: [UInt8], timeout: Double = 10) -> Response {
        guard let fd = connectLoopbackTCP(port: port) else { return Response(text: "") }
        defer { close(fd) }
        var wait = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        let deadline = Date().addingTimeInterval(timeout)
        while offset < bytes.count, Date() < deadline {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                break
            }
            offset += sent
        }
        return Response(text: readToClose(fd, until: deadline))
    }

    public static func exchange(port: Int, _ text: String, timeout: Double = 10) -> Response {
        exchange(port: port, Array(text.utf8), timeout: timeout)
    }

    /// A GET (or another method) of `path` with the token as a bearer token when given.
    public static func request(
        port: Int, _ path: String, method: String = "GET", token: String? = nil, body: String = "",
        contentType: String? = nil
    ) -> Response {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        return exchange(port: port, text)
    }

    /// What the peer sends until it closes (or resets) the connection or `deadline` passes.
    public static func readToClose(_ fd: Int32, until deadline: Date) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while Date() < deadline, received.count < 8 * 1024 * 1024 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[0..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                break
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
