/// One HTTP/1.x request as the status server accepted it (`HTTPRequestParser`): the method, the path
/// percent-decoded and checked (no `.`/`..` segment, no NUL, no backslash), the raw query, the headers with
/// lower-cased names and the body (at most the parser's `bodyBytes`).
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    public var query: String
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: String = "", headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (any case), nil when absent.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a request is refused before it reaches a route: the status code and a short reason for the body.
public struct HTTPRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let reason: String

    public init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status) \(reason)" }
}
