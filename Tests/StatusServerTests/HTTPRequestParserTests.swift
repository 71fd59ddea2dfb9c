import Testing

@testable import StatusServer

/// The request parser over good and bad requests, whole and byte by byte: every input ends in a request or a
/// refusal with the right code, never a trap.
@Suite struct HTTPRequestParserTests {
    static func parse(_ text: String, limits: HTTPRequestParser.Limits = .init(), byteByByte: Bool = false)
        -> HTTPRequestParser.Outcome
    {
        var parser = HTTPRequestParser(limits: limits)
        let bytes = Array(text.utf8)
        guard byteByByte else { return parser.receive(bytes) }
        var outcome = HTTPRequestParser.Outcome.incomplete
        for byte in bytes {
            outcome = parser.receive([byte])
            if case .incomplete = outcome { continue }
            break
        }
        return outcome
    }

    static func status(_ outcome: HTTPRequestParser.Outcome) -> Int? {
        if case let .refused(refusal) = outcome { return refusal.status }
        return nil
    }

    @Test(arguments: [false, true]) func readsAGetWithHeaders(byteByByte: Bool) throws {
        let outcome = Self.parse(
            "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer t\r\n\r\n", byteByByte: byteByByte)
        guard case let .complete(request) = outcome else {
            Issue.record("not complete: \(outcome)")
            return
        }
        #expect(request.method == "GET")
        #expect(request.path == "/metrics")
        #expect(request.query == "x=1")
        #expect(request.header("authorization") == "Bearer t")
        #expect(request.header("Host") == "a")
    }

    @Test func readsAPostBodyOfContentLength() {
        let outcome = Self.parse("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        #expect(
            outcome
                == .complete(
                    HTTPRequest(method: "POST", path: "/a", headers: ["content-length": "5"], body: Array("hello".utf8))
                ))
        #expect(Self.parse("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel") == .incomplete)
    }

    @Test(arguments: [
        ("garbage\r\n\r\n", 400),
        ("GET\r\n\r\n", 400),
        ("GET / HTTP/1.1 extra\r\n\r\n", 400),
        ("get / HTTP/1.1\r\n\r\n", 400),
        ("GET / FTP/1.0\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\n\r\n", 505),
        ("GET http://evil/ HTTP/1.1\r\n\r\n", 400),
        ("GET /../etc/passwd HTTP/1.1\r\n\r\n", 400),
        ("GET /%2e%2e/etc/passwd HTTP/1.1\r\n\r\n", 400),
        ("GET /%2E%2E%2Fetc%2Fpasswd HTTP/1.1\r\n\r\n", 400),
        ("GET /a/./b HTTP/1.1\r\n\r\n", 400),
        ("GET /a%00 HTTP/1.1\r\n\r\n", 400),
        ("GET /a%5c..%5cb HTTP/1.1\r\n\r\n", 400),
        ("GET /%zz HTTP/1.1\r\n\r\n", 400),
        ("GET /% HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n folded: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nX: a\u{01}b\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: 99999\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
    ])
    func refusesMalformedRequests(text: String, status: Int) {
        #expect(Self.status(Self.parse(text)) == status, "\(text.debugDescription)")
        #expect(Self.status(Self.parse(text, byteByByte: true)) == status, "byte by byte: \(text.debugDescription)")
    }

    @Test func refusesAMalformedRequestLineBeforeTheHeadersEnd() {
        var parser = HTTPRequestParser()
        #expect(Self.status(parser.receive(Array("NOT HTTP AT ALL\r\nHost: x\r\n".utf8))) == 400)
    }

    @Test func refusesOversizedHeadsAndTargets() {
        let limits = HTTPRequestParser.Limits(headerBytes: 1024, targetBytes: 256, bodyBytes: 16)
        let longHeader = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 2000) + "\r\n\r\n"
        #expect(Self.status(Self.parse(longHeader, limits: limits)) == 431)
        #expect(Self.status(Self.parse(longHeader, limits: limits, byteByByte: true)) == 431)
        let endless = "GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 500)
        #expect(Self.status(Self.parse(endless, limits: limits)) == 431)
        let longTarget = "GET /" + String(repeating: "a", count: 300) + " HTTP/1.1\r\n\r\n"
        #expect(Self.status(Self.parse(longTarget, limits: limits)) == 414)
        let noLineEnd = "GET /" + String(repeating: "a", count: 600)
        #expect(Self.status(Self.parse(noLineEnd, limits: limits, byteByByte: true)) == 414)
    }

    @Test func holdsNoMoreThanItsLimits() {
        var parser = HTTPRequestParser(limits: .init(headerBytes: 1024, targetBytes: 256, bodyBytes: 16))
        _ = parser.receive(Array("GET / HTTP/1.1\r\n".utf8))
        for _ in 0..<100 where parser.bufferedBytes <= 1028 {
            if case .refused = parser.receive([UInt8](repeating: 0x61, count: 100)) { break }
        }
        #expect(parser.bufferedBytes == 0)
    }

    /// Random bytes never trap and never end in anything but one of the three outcomes.
    @Test func randomBytesEndInAnOutcome() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var parser = HTTPRequestParser(limits: .init(headerBytes: 1024, targetBytes: 128, bodyBytes: 64))
            let prefix = Array("GET /".utf8)
            var bytes = Bool.random(using: &generator) ? prefix : []
            bytes += (0..<Int.random(in: 0..<2048, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = parser.receive(bytes)
        }
    }
}
