/// A response of the status server: always `Connection: close` (one request per connection keeps every
/// connection's life bounded by one deadline), `Cache-Control: no-store` and headers that keep a browser from
/// guessing types or framing the page.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(
        status: Int, contentType: String = "text/plain; charset=utf-8", headers: [(String, String)] = [], body: [UInt8]
    ) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public init(
        status: Int, contentType: String = "text/plain; charset=utf-8", headers: [(String, String)] = [], text: String
    ) {
        self.init(status: status, contentType: contentType, headers: headers, body: Array(text.utf8))
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.body == rhs.body
            && lhs.headers.map(\.0) == rhs.headers.map(\.0) && lhs.headers.map(\.1) == rhs.headers.map(\.1)
    }

    /// A plain-text refusal naming its reason.
    public static func refusal(_ refusal: HTTPRefusal, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: refusal.status, headers: headers,
            text: "\(refusal.status) \(reason(refusal.status)): \(refusal.reason)\n")
    }

    /// The bytes on the wire; `head` leaves the body out (HEAD) but keeps its length.
    public func serialized(head: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        text += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        text += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
        text += "Referrer-Policy: no-referrer\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        var bytes = Array(text.utf8)
        if !head { bytes.append(contentsOf: body) }
        return bytes
    }

    /// The reason phrase of the codes the server sends.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 202: "Accepted"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}
