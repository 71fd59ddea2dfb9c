import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The status server of the built binary (`http:`, docs/status-page.md) under bad input, while it replays a
/// capture to a real mosquitto: every bad request gets a clear refusal (its code and reason), the daemon keeps
/// running and serving, and the replay still delivers every event (exit 0, nothing dropped, every beacon's
/// sightings at the subscriber).
@Suite(.serialized) struct StatusServerDaemonTests {
    static let readToken = "read-token-3f9a1c"
    static let actionToken = "action-token-b27e44"

    struct Gateway {
        let bed: DaemonTestBed
        let daemon: DaemonProcess
        let subscriber: TestSubscriber
        let port: Int
    }

    /// A gateway replaying `duration` seconds of 3 iBeacons at real speed, with `http:` on a free port.
    func startGateway(duration: Double = 25, http: [String] = [], extra: String = "") async throws -> Gateway {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try Self.readToken.write(toFile: bed.directory + "/http.token", atomically: true, encoding: .utf8)
        try Self.actionToken.write(toFile: bed.directory + "/http-action.token", atomically: true, encoding: .utf8)
        chmod(bed.directory + "/http.token", 0o600)
        chmod(bed.directory + "/http-action.token", 0o600)
        let port = try FreePort.find()
        let lines =
            [
                "http:", "  enabled: true", "  listen: 127.0.0.1", "  port: \(port)",
                "  token_file: \(bed.directory)/http.token", "  action_token_file: \(bed.directory)/http-action.token",
            ] + http.map { "  " + $0 }
        try bed.writeConfig(lines.joined(separator: "\n") + "\n" + extra)
        let subscriber = try await bed.startSubscriber()
        let start = Date().timeIntervalSince1970 - 30
        let observations = (1...3).flatMap {
            DaemonTestBed.iBeaconObservations(
                minor: $0, start: start + Double($0) * 0.1, duration: duration, interval: 1)
        }
        let capture = try bed.writeCapture("three.btsnoop", observations)
        let daemon = try DaemonProcess(arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath])
        try await waitUntil("the status page listening", timeout: 60) {
            daemon.stderr.contains("status page listening") || !daemon.isRunning
        }
        #expect(daemon.isRunning, "stderr: \(daemon.stderr.suffix(2000))")
        return Gateway(bed: bed, daemon: daemon, subscriber: subscriber, port: port)
    }

    /// The replay ends by itself with everything delivered: exit 0 (75 if events were left), nothing dropped, the
    /// summary's events all published, and sightings of every beacon at the subscriber.
    func expectNothingLost(_ gateway: Gateway) async {
        let code = await gateway.daemon.waitForExit(timeout: 120)
        let log = gateway.daemon.stderr
        #expect(code == 0, "stderr: \(log.suffix(3000))")
        #expect(logValue(log, message: "msg=stopped", key: "dropped") == "0", "stderr: \(log.suffix(2000))")
        let events = logValue(log, message: "msg=stopped", key: "events")
        #expect(events != nil && events == logValue(log, message: "msg=stopped", key: "published"))
        for minor in 1...3 {
            let id = gateway.bed.beaconID(minor: minor)
            #expect(
                gateway.subscriber.messages.contains {
                    $0.payload.contains("\"kind\":\"sighting\"") && $0.payload.contains(id)
                },
                "sightings of \(id)")
        }
        await gateway.subscriber.stop()
    }

    func expectRefusal(_ response: HTTPTestClient.Response, _ status: Int, _ what: String) {
        #expect(response.status == status, "\(what): \(response.text.prefix(300).debugDescription)")
        #expect(response.body.hasPrefix("\(status) "), "\(what): a body naming the refusal")
    }

    @Test func badRequestsAreRefusedAndTheGatewayKeepsPublishing() async throws {
        let gateway = try await startGateway(http: ["max_header_bytes: 2KiB", "max_body_bytes: 1KiB"])
        let port = gateway.port
        let t = Self.readToken

        // The good path first: /metrics with the read token.
        let metrics = HTTPTestClient.request(port: port, "/metrics", token: t)
        #expect(metrics.status == 200, "\(metrics.text.prefix(500))")
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(metrics.body.contains("# TYPE beaconbridge_reports_total counter"))
        #expect(metrics.body.contains("process_resident_memory_bytes "))

        // Malformed request lines and headers.
        expectRefusal(HTTPTestClient.exchange(port: port, "HELLO\r\n\r\n"), 400, "no method, path, version")
        expectRefusal(HTTPTestClient.exchange(port: port, "GET / HTTP/1.1 x\r\n\r\n"), 400, "four parts")
        expectRefusal(HTTPTestClient.exchange(port: port, "GET / HTTP/9.9\r\n\r\n"), 505, "HTTP/9.9")
        expectRefusal(HTTPTestClient.exchange(port: port, "GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400, "bad header")
        expectRefusal(
            HTTPTestClient.exchange(
                port: port, [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x0A, 0x0A]),
            400, "a TLS ClientHello")
        // Oversized: a head over 2 KiB, a body over 1 KiB, a very long target, a chunked body.
        let longHeader = "GET /metrics HTTP/1.1\r\nX-Pad: " + String(repeating: "a", count: 100_000) + "\r\n\r\n"
        expectRefusal(HTTPTestClient.exchange(port: port, longHeader), 431, "a 100 KB header")
        expectRefusal(
            HTTPTestClient.exchange(
                port: port, "POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n" + String(repeating: "b", count: 50_000)
            ),
            413, "a 2 MB body")
        expectRefusal(
            HTTPTestClient.exchange(port: port, "GET /" + String(repeating: "c", count: 5000) + " HTTP/1.1\r\n\r\n"),
            414,
            "a 5 KB target")
        expectRefusal(
            HTTPTestClient.exchange(port: port, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 501,
            "chunked")
        // Path traversal, plain and encoded, and a NUL.
        for path in [
            "/../etc/passwd", "/%2e%2e/etc/passwd", "/%2E%2E%2Fetc%2Fpasswd", "/metrics/../../etc/passwd", "/%00",
        ] {
            let response = HTTPTestClient.request(port: port, path, token: t)
            expectRefusal(response, 400, path)
            #expect(!response.text.contains("root:"), "\(path) never serves a file")
        }
        // Unknown paths, wrong methods.
        expectRefusal(HTTPTestClient.request(port: port, "/etc/passwd", token: t), 404, "/etc/passwd")
        expectRefusal(HTTPTestClient.request(port: port, "/metrics.html", token: t), 404, "/metrics.html")
        let delete = HTTPTestClient.request(port: port, "/metrics", method: "DELETE", token: t)
        expectRefusal(delete, 405, "DELETE /metrics")
        #expect(delete.header("Allow") == "GET, HEAD")
        expectRefusal(
            HTTPTestClient.request(port: port, "/metrics", method: "POST", token: Self.actionToken), 405,
            "POST /metrics")
        // Tokens: none, wrong, the read token where the action token is needed.
        let none = HTTPTestClient.request(port: port, "/metrics")
        expectRefusal(none, 401, "no token")
        #expect(none.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
        expectRefusal(HTTPTestClient.request(port: port, "/metrics", token: "wrong"), 401, "wrong token")
        expectRefusal(HTTPTestClient.request(port: port, "/", token: t + "x"), 401, "a longer token")
        #expect(!none.text.contains(Self.readToken) && !none.text.contains(Self.actionToken), "no token in a page")
        // The token a browser sends (Basic, the token as the password).
        let basic = Data("user:\(t)".utf8).base64EncodedString()
        let page = HTTPTestClient.exchange(port: port, "GET / HTTP/1.1\r\nAuthorization: Basic \(basic)\r\n\r\n")
        #expect(page.status == 200)
        #expect(page.body.contains("<h1>Gateway"))

        // Still serving, still running; the figures of the refusals are in the metrics.
        let after = HTTPTestClient.request(port: port, "/metrics", token: t)
        #expect(after.status == 200)
        #expect(after.body.contains("beaconbridge_http_requests_total{outcome=\"refused\"}"))
        #expect(gateway.daemon.isRunning)
        let log = gateway.daemon.stderr
        #expect(!log.contains(Self.readToken) && !log.contains(Self.actionToken), "no token in the log")
        await expectNothingLost(gateway)
    }

    /// A sample's value in an exposition (`name` with its labels, as written), nil when absent.
    static func metric(_ text: String, _ name: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    /// `beaconbridge_delivery_latency_seconds`: a histogram whose counts move while the replay's events are
    /// acknowledged by the real broker (on loopback, nearly all within a second), buckets cumulative, `+Inf` =
    /// `_count`.
    @Test func theDeliveryLatencyHistogramCountsAcknowledgedEvents() async throws {
        let gateway = try await startGateway(duration: 15)
        let port = gateway.port
        let name = "beaconbridge_delivery_latency_seconds"
        @Sendable func count() -> Double {
            Self.metric(HTTPTestClient.request(port: port, "/metrics", token: Self.readToken).body, name + "_count")
                ?? 0
        }
        try await waitUntil("acknowledged events in the histogram", timeout: 20) { count() > 0 }
        let first = count()
        try await waitUntil("the histogram's count growing", timeout: 20) { count() > first }
        let text = HTTPTestClient.request(port: port, "/metrics", token: Self.readToken).body
        #expect(text.contains("# TYPE \(name) histogram"))
        let count = Self.metric(text, name + "_count")
        #expect(Self.metric(text, name + "_bucket{le=\"+Inf\"}") == count)
        let buckets = [
            "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "300", "1800",
        ]
        .compactMap { Self.metric(text, name + "_bucket{le=\"\($0)\"}") }
        #expect(buckets.count == 15, "\(text)")
        #expect(buckets == buckets.sorted(), "cumulative")
        // Loopback: acknowledged within a second (a loaded test machine may delay a few).
        #expect((buckets.last ?? 0) > 0 && (buckets[7]) >= (count ?? 0) * 0.9, "\(text)")
        let sum = Self.metric(text, name + "_sum") ?? -1
        #expect(sum >= 0 && sum < (count ?? 0) * 1.0, "mean latency under a second: \(sum) s for \(count ?? 0)")
        await expectNothingLost(gateway)
    }

    /// A client that sends a header byte a second (slowloris) is answered 408 and cut off at
    /// `request_timeout_s` (3 s here); meanwhile and after, other clients are served.
    @Test func aSlowClientIsCutOffAndOthersAreServed() async throws {
        let gateway = try await startGateway(http: ["request_timeout_s: 3", "max_connections: 4"])
        let port = gateway.port
        let slow = Task.detached { () -> (response: String, bytesSent: Int) in
            guard let fd = connectLoopbackTCP(port: port) else { return ("", 0) }
            defer { close(fd) }
            var wait = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            let head = Array("GET /metrics HTTP/1.1\r\nX-Slow: ".utf8)
            _ = head.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var sent = 0
            // One byte a second for at most 30 s, until the server answers or closes.
            for _ in 0..<30 {
                var byte: UInt8 = 0x61
                guard send(fd, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                sent += 1
                let text = HTTPTestClient.readToClose(fd, until: Date().addingTimeInterval(1))
                if !text.isEmpty { return (text, sent) }
            }
            return ("", sent)
        }
        // Others are served while the slow one is connected.
        for _ in 0..<3 {
            try await Task.sleep(for: .milliseconds(500))
            let response = HTTPTestClient.request(port: port, "/metrics", token: Self.readToken)
            #expect(response.status == 200)
        }
        let (text, sent) = await slow.value
        let response = HTTPTestClient.Response(text: text)
        expectRefusal(response, 408, "the slow client")
        // Cut off at its deadline (3 s from the connect: about 3 bytes), not when it gave up (30).
        #expect(sent < 15, "bytes the slow client sent before it was cut off: \(sent)")
        let metrics = HTTPTestClient.request(port: port, "/metrics", token: Self.readToken)
        #expect(metrics.body.contains("beaconbridge_http_requests_total{outcome=\"timed_out\"} 1"), "\(metrics.body)")

        // More slow clients than connections: the one over the limit gets 503 at once; once they are cut off,
        // the server serves again.
        // Silent connections are opened one by one, each followed by a request: once max_connections (4) are
        // open the request is refused at once.
        var holders: [Int32] = []
        defer { for fd in holders { close(fd) } }
        var refusedAt: Int?
        for count in 1...8 {
            if let fd = connectLoopbackTCP(port: port) { holders.append(fd) }
            try await Task.sleep(for: .milliseconds(100))
            let response = HTTPTestClient.request(port: port, "/metrics", token: Self.readToken)
            if response.status == 503 {
                expectRefusal(response, 503, "over max_connections")
                refusedAt = count
                break
            }
            #expect(response.status == 200, "\(response.text.prefix(300))")
        }
        var states: [String] = []
        for fd in holders {
            var byte: UInt8 = 0
            let peek = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            states.append("fd \(fd): getfd \(fcntl(fd, F_GETFD)) peek \(peek) errno \(errno)")
        }
        #expect(
            refusedAt != nil && refusedAt! >= 4,
            "refused once \(refusedAt.map(String.init) ?? "never") were held; \(states)")
        try await waitUntil("the idle connections cut off", timeout: 20) {
            HTTPTestClient.request(port: port, "/metrics", token: Self.readToken).status == 200
        }
        #expect(gateway.daemon.isRunning)
        await expectNothingLost(gateway)
    }

    /// A training started from the page (the POST its form sends) with the action token: refused without it,
    /// accepted with it; the rooms command's reply and the walk's progress show on the page, then the trained room.
    /// A body that is not a command is answered by the command's own parser (shown on the page), nothing crashes.
    @Test func aTrainingStartedFromThePageShowsItsProgress() async throws {
        let rooms = """
            rooms:
              enabled: true
              gateways: {testgw: lab, gw-b: hall}
              leader_settle_s: 0.5
            tracking:
              publish:
                sighting_interval_s: 1
            """
        let gateway = try await startGateway(duration: 40, extra: rooms)
        let port = gateway.port
        let device = gateway.bed.beaconID(minor: 1)
        let body = #"{"id":"page-1","room":"lab","device":"\#(device)","seconds":5}"#
        // The rooms part is there from the loop's first copy of its figures (within a second).
        try await waitUntil("the training form on the page", timeout: 10) {
            HTTPTestClient.request(port: port, "/", token: Self.readToken).body.contains(
                "<form class=\"action\" id=\"train\"")
        }
        // The beacons are listed once the page has been viewed (the loop copies them from then on).
        try await waitUntil("the three beacons listed on the page", timeout: 10) {
            let body = HTTPTestClient.request(port: port, "/", token: Self.readToken).body
            return (1...3).allSatisfy { body.contains(gateway.bed.beaconID(minor: $0)) }
        }
        expectRefusal(
            HTTPTestClient.request(port: port, "/actions/rooms/train", method: "POST", body: body), 401, "none")
        expectRefusal(
            HTTPTestClient.request(
                port: port, "/actions/rooms/train", method: "POST", token: Self.readToken, body: body),
            401, "the read token")
        expectRefusal(
            HTTPTestClient.request(port: port, "/actions/rooms/train", token: Self.actionToken), 405, "GET of an action"
        )
        let bad = HTTPTestClient.request(
            port: port, "/actions/rooms/train", method: "POST", token: Self.actionToken, body: "not json")
        #expect(bad.status == 202)
        try await waitUntil("the refusal of the bad body on the page", timeout: 20) {
            HTTPTestClient.request(port: port, "/", token: Self.readToken).body.contains("bad_request")
        }
        let accepted = HTTPTestClient.request(
            port: port, "/actions/rooms/train", method: "POST", token: Self.actionToken, body: body)
        #expect(accepted.status == 202, "\(accepted.text)")
        try await waitUntil("the training's progress on the page", timeout: 20) {
            HTTPTestClient.request(port: port, "/", token: Self.readToken).body.contains("id=\"training\"")
        }
        try await waitUntil("the trained room on the page", timeout: 30) {
            HTTPTestClient.request(port: port, "/", token: Self.readToken).body.contains("1 walk(s)")
        }
        let final = HTTPTestClient.request(port: port, "/", token: Self.readToken).body
        #expect(final.contains("page-1"), "the command's replies: \(final)")
        #expect(gateway.daemon.isRunning)
        await expectNothingLost(gateway)
    }

    /// The page with regions: each beacon's region state and RSSI plot; a teach and a forget started from the page
    /// (the POSTs its forms send): refused with a clear reason (401, 405, 400 naming the field, 409 while the
    /// device's teach runs), accepted with the action token; the teach's progress and its replies show on the page.
    @Test func aTeachAndAForgetFromThePageShowTheirProgress() async throws {
        let gateway = try await startGateway(duration: 40, extra: DaemonTestBed.officeRegion)
        let port = gateway.port
        let device = gateway.bed.beaconID(minor: 2)
        @Sendable func page() -> String { HTTPTestClient.request(port: port, "/part", token: Self.readToken).body }
        try await waitUntil("the beacons inside the region, with their RSSI plots", timeout: 15) {
            let html = page()
            return html.contains("<span data-region=\"office\">office: inside</span>")
                && html.contains("<svg class=\"rssi\"")
                && html.contains(device)
        }
        let teach = "/actions/regions/teach"
        let body = #"{"id":"page-t1","region":"office","device":"\#(device)","at":"boundary","seconds":8}"#
        expectRefusal(HTTPTestClient.request(port: port, teach, method: "POST", body: body), 401, "no token")
        expectRefusal(HTTPTestClient.request(port: port, teach, token: Self.actionToken), 405, "GET of an action")
        let noDevice = HTTPTestClient.request(
            port: port, teach, method: "POST", token: Self.actionToken, body: #"{"region":"office","at":"boundary"}"#)
        expectRefusal(noDevice, 400, "no device")
        #expect(noDevice.body.hasPrefix("400 Bad Request: device: "), "\(noDevice.body)")
        let attic = HTTPTestClient.request(
            port: port, teach, method: "POST", token: Self.actionToken,
            body: #"{"region":"attic","device":"\#(device)","at":"boundary"}"#)
        expectRefusal(attic, 400, "an unknown region")
        #expect(attic.body.hasPrefix("400 Bad Request: region: ") && attic.body.contains("office"), "\(attic.body)")

        let accepted = HTTPTestClient.request(port: port, teach, method: "POST", token: Self.actionToken, body: body)
        #expect(accepted.status == 202, "\(accepted.text)")
        try await waitUntil("the teach's progress on the page", timeout: 10) {
            page().contains("Teaching <b>office</b> at boundary with \(device)")
        }
        expectRefusal(
            HTTPTestClient.request(port: port, teach, method: "POST", token: Self.actionToken, body: body), 409,
            "a second teach of the device while one runs")
        try await waitUntil("the teach's end in the replies on the page", timeout: 20) {
            let html = page()
            return html.contains("&quot;state&quot;:&quot;done&quot;") && html.contains("page-t1")
        }
        #expect(page().contains("&quot;stored&quot;:true"), "\(page())")
        let forget = HTTPTestClient.request(
            port: port, "/actions/regions/forget", method: "POST", token: Self.actionToken,
            body: #"{"id":"page-f1","region":"office","device":"\#(device)"}"#)
        #expect(forget.status == 202, "\(forget.text)")
        try await waitUntil("the forget's reply on the page", timeout: 10) {
            page().contains("&quot;op&quot;:&quot;forget&quot;") && page().contains("&quot;forgotten&quot;:1")
        }
        #expect(gateway.daemon.isRunning)
        await expectNothingLost(gateway)
    }
}
