import BeaconDelivery
import Foundation
import SQLiteStore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The webhook sink end to end (issue 32): the built binary replays a capture to a real mosquitto and POSTs the
/// same events to a local HTTP server, which refuses (503) for a while, then recovers; the webhook delivers
/// from its own outbox cursor, across a restart, and over TLS with a self-signed certificate.
@Suite(.serialized) struct WebhookDaemonTests {
    static let token = "webhook-test-token-7c1f"

    func writeConfig(_ bed: DaemonTestBed, url: String, extra: [String] = []) throws {
        try Self.token.write(toFile: bed.directory + "/token", atomically: true, encoding: .utf8)
        chmod(bed.directory + "/token", 0o600)
        let lines =
            [
                "webhook:", "  url: \(url)", "  headers:", "    X-Site: lab", "  token_file: \(bed.directory)/token",
                "  kinds: [sighting, presence]", "  batch_size: 5", "  retry_min_s: 100ms", "  retry_max_s: 400ms",
            ] + extra.map { "  " + $0 }
        try bed.writeConfig(lines.joined(separator: "\n"))
    }

    func capture(_ bed: DaemonTestBed, _ name: String, minor: Int, duration: Double) throws -> String {
        try bed.writeCapture(
            name,
            DaemonTestBed.iBeaconObservations(
                minor: minor, start: Date().timeIntervalSince1970 - 60, duration: duration, interval: 1))
    }

    /// The accepted events, by sequence, checking that no accepted request repeats one (a refused one is
    /// sent again, an accepted one never) and that they arrive in sequence order.
    func accepted(_ server: WebhookServer) -> [Int] {
        let sequences = server.requests.filter { $0.status == 200 }.flatMap {
            $0.events.compactMap { $0["seq"] as? Int }
        }
        #expect(sequences == sequences.sorted(), "in sequence order")
        #expect(Set(sequences).count == sequences.count, "no duplicates among accepted requests")
        return sequences
    }

    /// Whether the process has libcurl mapped (its /proc maps), nil when they cannot be read. (Read to the end
    /// through a handle: procfs files report size 0, so a read by size sees nothing.)
    static func mapsLibcurl(_ pid: Int32) -> Bool? {
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/maps"),
            let data = try? handle.readToEnd(), !data.isEmpty
        else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        #expect(maps.contains("/beaconbridge"), "the maps of the binary itself")
        return maps.contains("libcurl")
    }

    /// libcurl and its 28 libraries (about 4 MB of RSS) are loaded only for a webhook: a gateway without one never
    /// maps them, while the one above (with a webhook) does.
    @Test func aGatewayWithoutAWebhookDoesNotLoadLibcurl() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig("")
        let subscriber = try await bed.startSubscriber()
        let path = try capture(bed, "slow.btsnoop", minor: 2, duration: 30)
        let process = try DaemonProcess(arguments: ["replay", path, "--config", bed.configPath, "--speed", "1"])
        try await waitUntil("the first sighting", timeout: 120) {
            subscriber.messages.contains { $0.payload.contains("\"kind\":\"sighting\"") } || !process.isRunning
        }
        #expect(process.isRunning, "stderr: \(process.stderr.suffix(2000))")
        #expect(Self.mapsLibcurl(process.pid) == false)
        process.signal(SIGTERM)
        #expect(await process.waitForExit(timeout: 60) == 0, "stderr: \(process.stderr.suffix(2000))")
    }

    @Test func eventsReachTheWebhookThroughA503PeriodWithNothingLost() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let server = try await WebhookServer.start(in: bed.directory)
        defer { server.stop() }
        server.refuse(true)
        try writeConfig(bed, url: "http://127.0.0.1:\(server.port)/events")
        let subscriber = try await bed.startSubscriber()
        let path = try capture(bed, "short.btsnoop", minor: 1, duration: 20)
        let process = try DaemonProcess(arguments: ["replay", path, "--config", bed.configPath])
        try await waitUntil("three refused POSTs", timeout: 120) {
            server.requests.filter { $0.status == 503 }.count >= 3 || !process.isRunning
        }
        #expect(Self.mapsLibcurl(process.pid) == true, "a gateway with a webhook loads libcurl")
        server.refuse(false)
        let status = await process.waitForExit(timeout: 120)
        let stderr = process.stderr
        #expect(status == 0, "stderr: \(stderr.suffix(3000))")
        #expect(stderr.contains("webhook delivery failed"), "stderr: \(stderr.suffix(3000))")
        #expect(stderr.contains("webhook delivery resumed"))
        #expect(!stderr.contains(Self.token), "the token is never logged")

        let sequences = accepted(server)
        let requests = server.requests
        #expect(requests.allSatisfy { $0.authorization == "Bearer \(Self.token)" && $0.site == "lab" })
        #expect(requests.allSatisfy { $0.contentType == "application/json" && $0.path == "/events" })
        #expect(requests.allSatisfy { $0.events.count <= 5 })
        let kinds = Set(requests.flatMap { $0.events.compactMap { $0["kind"] as? String } })
        #expect(kinds == ["sighting", "presence"], "telemetry is not among the kinds")
        // Every sighting MQTT carried reached the webhook too (sightings are never snapshots).
        let mqttSightings = Set(
            subscriber.messages.compactMap { message -> Int? in
                guard
                    let object = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any],
                    object["kind"] as? String == "sighting"
                else { return nil }
                return object["seq"] as? Int
            })
        let webhookSightings = Set(
            requests.filter { $0.status == 200 }.flatMap { $0.events }.filter { $0["kind"] as? String == "sighting" }
                .compactMap { $0["seq"] as? Int })
        #expect(!mqttSightings.isEmpty)
        #expect(webhookSightings == mqttSightings)
        #expect(logValue(stderr, message: "webhook stopped", key: "delivered") == "\(sequences.count)")
        #expect(try await GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath)).stats().rows == 0)
    }

    /// The receiver is down for a whole run: the replay exits 75 with the events kept in the outbox for the
    /// webhook alone (MQTT got them); the next run delivers them first, then its own.
    @Test func theWebhookCursorSurvivesARestart() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let server = try await WebhookServer.start(in: bed.directory)
        defer { server.stop() }
        server.refuse(true)
        try writeConfig(bed, url: "http://127.0.0.1:\(server.port)/events")
        let first = try await BuiltBinary.run(
            ["replay", try capture(bed, "first.btsnoop", minor: 1, duration: 10), "--config", bed.configPath],
            timeout: 120)
        #expect(first.status == 75, "stderr: \(first.stderr.suffix(3000))")
        let kept = try await GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath)).stats().rows
        #expect(kept > 0)
        #expect(accepted(server).isEmpty)

        server.refuse(false)
        let second = try await BuiltBinary.run(
            ["replay", try capture(bed, "second.btsnoop", minor: 2, duration: 5), "--config", bed.configPath],
            timeout: 120)
        #expect(second.status == 0, "stderr: \(second.stderr.suffix(3000))")
        let sequences = accepted(server)
        #expect(sequences.count >= kept + 1, "the first run's events, then the second's")
        let beacons = Set(
            server.requests.filter { $0.status == 200 }.flatMap { $0.events }.compactMap { $0["beacon_id"] as? String })
        #expect(beacons.contains { $0.hasSuffix(":1") } && beacons.contains { $0.hasSuffix(":2") }, "\(beacons)")
        #expect(try await GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath)).stats().rows == 0)
    }

    /// HTTPS to a server with a self-signed certificate for 127.0.0.1, trusted through `ca_file`; without it
    /// the system CAs refuse the certificate and nothing is accepted.
    @Test func deliversOverTLSWithTheConfiguredCA() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let certificate = bed.directory + "/cert.pem"
        let key = bed.directory + "/key.pem"
        let openssl = try ChildProcess(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        try #require(await openssl.exited(within: 60))
        try #require(openssl.wait() == 0)
        let server = try await WebhookServer.start(in: bed.directory, certificate: certificate, key: key)
        defer { server.stop() }
        try writeConfig(bed, url: "https://127.0.0.1:\(server.port)/events", extra: ["ca_file: \(certificate)"])
        let run = try await BuiltBinary.run(
            ["replay", try capture(bed, "tls.btsnoop", minor: 1, duration: 5), "--config", bed.configPath],
            timeout: 120)
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(3000))")
        #expect(!accepted(server).isEmpty)
        #expect(!run.stderr.contains("webhook delivery failed"), "stderr: \(run.stderr.suffix(3000))")
    }
}
