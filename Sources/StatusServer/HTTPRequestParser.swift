/// Reads one HTTP/1.0 or 1.1 request from bytes as they arrive, within fixed limits; never traps on any input.
///
/// Pure: no I/O, no clock (the server bounds the time a request may take). The request line is checked as soon as
/// its line ends, so a malformed one is refused without waiting for the headers. Refusals: 400 (malformed request
/// line, header, target, percent-encoding, a `.`/`..` path segment, a NUL or a backslash, conflicting
/// `Content-Length`), 414 (target over `targetBytes`), 431 (head over `headerBytes`), 413 (`Content-Length` over
/// `bodyBytes`), 501 (`Transfer-Encoding`: chunked bodies are not accepted), 505 (not HTTP/1.x).
public struct HTTPRequestParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// The request line and headers together, with their line ends.
        public var headerBytes: Int
        /// The request target (path and query).
        public var targetBytes: Int
        /// The body (`Content-Length`).
        public var bodyBytes: Int

        public init(headerBytes: Int = 8192, targetBytes: Int = 2048, bodyBytes: Int = 4096) {
            self.headerBytes = headerBytes
            self.targetBytes = targetBytes
            self.bodyBytes = bodyBytes
        }
    }

    public enum Outcome: Sendable, Equatable {
        case incomplete
        case complete(HTTPRequest)
        case refused(HTTPRefusal)
    }

    public let limits: Limits
    private var buffer: [UInt8] = []
    private var head: HTTPRequest?
    private var headLength = 0
    private var bodyLength = 0
    private var requestLineChecked = false
    /// Where the search for the head's end resumes (each byte is looked at a bounded number of times).
    private var scanned = 0
    private var finished: Outcome?

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes the parser holds (the connection's memory, bounded by the limits).
    public var bufferedBytes: Int { buffer.count }

    /// Takes the next bytes; once an outcome other than `.incomplete` is returned, later calls return it again.
    public mutating func receive(_ bytes: some Collection<UInt8>) -> Outcome {
        if let finished { return finished }
        // Before the head ends, room for a head and a body (what follows the head in the same read is the body's);
        // after, for the body; bytes past that are never kept (one request per connection).
        let room = (head == nil ? limits.headerBytes + 4 + limits.bodyBytes : headLength + bodyLength) - buffer.count
        buffer.append(contentsOf: bytes.prefix(max(0, room)))
        let outcome = advance(overflow: bytes.count > room)
        if case .incomplete = outcome { return outcome }
        finished = outcome
        buffer = []
        return outcome
    }

    private mutating func advance(overflow: Bool) -> Outcome {
        if head == nil {
            if !requestLineChecked, let end = buffer.firstIndex(of: 0x0A) {
                requestLineChecked = true
                if case let .failure(refusal) = Self.requestLine(line(buffer[..<end]), limits: limits) {
                    return .refused(refusal)
                }
            } else if !requestLineChecked, buffer.count > min(limits.targetBytes + 32, limits.headerBytes) {
                return .refused(HTTPRefusal(414, "request target longer than \(limits.targetBytes) bytes"))
            }
            let found = Self.endOfHead(buffer, from: scanned)
            scanned = max(0, buffer.count - 3)
            guard let end = found else {
                if buffer.count > limits.headerBytes || overflow {
                    return .refused(HTTPRefusal(431, "request head longer than \(limits.headerBytes) bytes"))
                }
                return .incomplete
            }
            guard end <= limits.headerBytes else {
                return .refused(HTTPRefusal(431, "request head longer than \(limits.headerBytes) bytes"))
            }
            switch parseHead(buffer[..<end]) {
            case let .failure(refusal): return .refused(refusal)
            case let .success((request, length)):
                head = request
                headLength = end
                bodyLength = length
            }
        }
        guard var request = head else { return .incomplete }
        guard buffer.count >= headLength + bodyLength else { return .incomplete }
        request.body = Array(buffer[headLength..<(headLength + bodyLength)])
        return .complete(request)
    }

    /// The offset just past the blank line that ends the head (CRLF CRLF, or bare LF LF), nil before it arrived.
    static func endOfHead(_ bytes: [UInt8], from start: Int = 0) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    /// A line without its CR.
    private func line(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.last == 0x0D ? bytes.dropLast() : bytes
    }

    private func parseHead(_ bytes: ArraySlice<UInt8>) -> Result<(HTTPRequest, Int), HTTPRefusal> {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line($0) }
        guard let first = lines.first else { return .failure(HTTPRefusal(400, "empty request")) }
        let request: HTTPRequest
        switch Self.requestLine(first, limits: limits) {
        case let .failure(refusal): return .failure(refusal)
        case let .success(value): request = value
        }
        var headers: [String: String] = [:]
        for raw in lines.dropFirst() where !raw.isEmpty {
            guard raw.first != 0x20, raw.first != 0x09 else {
                return .failure(HTTPRefusal(400, "folded header line"))
            }
            guard let colon = raw.firstIndex(of: 0x3A), colon > raw.startIndex else {
                return .failure(HTTPRefusal(400, "header line without a name and a colon"))
            }
            let name = raw[raw.startIndex..<colon]
            guard name.allSatisfy(Self.isTokenByte) else { return .failure(HTTPRefusal(400, "malformed header name")) }
            let value = raw[(colon + 1)...]
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                return .failure(HTTPRefusal(400, "control character in a header value"))
            }
            let key = String(decoding: name, as: UTF8.self).lowercased()
            let text = String(decoding: value, as: UTF8.self).trimmingSpaces()
            if let earlier = headers[key] {
                if key == "content-length" || key == "authorization" || key == "host", earlier != text {
                    return .failure(HTTPRefusal(400, "conflicting \(key) headers"))
                }
                headers[key] = key == "content-length" || key == "authorization" ? text : earlier + ", " + text
            } else {
                headers[key] = text
            }
        }
        if headers["transfer-encoding"] != nil {
            return .failure(HTTPRefusal(501, "Transfer-Encoding is not accepted; send Content-Length"))
        }
        var length = 0
        if let text = headers["content-length"] {
            guard !text.isEmpty, text.count <= 12, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(text)
            else {
                return .failure(HTTPRefusal(400, "malformed Content-Length"))
            }
            guard value <= limits.bodyBytes else {
                return .failure(HTTPRefusal(413, "body longer than \(limits.bodyBytes) bytes"))
            }
            length = value
        }
        var complete = request
        complete.headers = headers
        return .success((complete, length))
    }

    /// `METHOD SP target SP HTTP/1.x`: the request with its method, path and query.
    static func requestLine(_ line: ArraySlice<UInt8>, limits: Limits) -> Result<HTTPRequest, HTTPRefusal> {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(HTTPRefusal(400, "malformed request line (expected: METHOD /path HTTP/1.1)"))
        }
        let method = parts[0]
        guard (1...16).contains(method.count), method.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            return .failure(HTTPRefusal(400, "malformed method"))
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version.hasPrefix("HTTP/") else { return .failure(HTTPRefusal(400, "malformed HTTP version")) }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .failure(HTTPRefusal(505, "only HTTP/1.0 and HTTP/1.1 are served"))
        }
        let target = parts[1]
        guard target.count <= limits.targetBytes else {
            return .failure(HTTPRefusal(414, "request target longer than \(limits.targetBytes) bytes"))
        }
        guard target.first == 0x2F, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(HTTPRefusal(400, "the request target must be a path starting with /"))
        }
        let question = target.firstIndex(of: 0x3F)
        let rawPath = target[target.startIndex..<(question ?? target.endIndex)]
        let query = question.map { String(decoding: target[($0 + 1)...], as: UTF8.self) } ?? ""
        guard let decoded = percentDecoded(rawPath) else {
            return .failure(HTTPRefusal(400, "malformed percent-encoding in the path"))
        }
        guard !decoded.contains(0), !decoded.contains(0x5C) else {
            return .failure(HTTPRefusal(400, "NUL or backslash in the path"))
        }
        let segments = decoded.split(separator: 0x2F, omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0.elementsEqual([0x2E]) || $0.elementsEqual([0x2E, 0x2E]) }) else {
            return .failure(HTTPRefusal(400, "`.` or `..` in the path"))
        }
        return .success(
            HTTPRequest(
                method: String(decoding: method, as: UTF8.self), path: String(decoding: decoded, as: UTF8.self),
                query: query))
    }

    /// `%XX` decoded; nil for a `%` not followed by two hex digits.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x25 {
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
