import BeaconModel
import Foundation
import SiteConfig
import TestSupport
import Testing

/// One site configuration for every gateway (issue 46; docs/site-config.md): `site push` and `site status`
/// against a real mosquitto, then three gateway processes replaying captures that apply a push, refuse every
/// bad one, roll back the push after which the broker goes away, and come back on the last good version after a
/// restart, their own part (id, broker) untouched.
@Suite(.serialized) struct SiteConfigGatewaysTests {
    static let start: Double = 1_700_000_000
    static let uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
    static let keyText = "9a3f1c0e5b7d2a4f6e8c0b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a"

    /// The site's shared part with one region, `name`, entered above -70 dBm by the captures' iBeacon at -60.
    static func shared(region name: String, interval: Int = 5) -> String {
        """
        telemetry: {interval_s: \(interval)}
        regions:
          - name: \(name)
            match: {format: ibeacon, uuid: \(uuid)}
            enter: {rssi_above: -70}

        """
    }

    /// A gateway's own file: its id, the broker, the outbox, `site:` with the key file and its state file.
    static func local(_ id: String, directory: String, port: Int, timeout: Int = 24) -> String {
        """
        gateway: {id: \(id)}
        mqtt: {host: 127.0.0.1, port: \(port), reconnect_min_s: 100ms, reconnect_max_s: 500ms}
        outbox: {path: \(directory)/\(id).sqlite}
        site:
          id: house
          key_file: \(directory)/site.key
          apply_timeout_s: \(timeout)
          max_bytes: 8192
          state_file: \(directory)/\(id)-site.json

        """
    }

    static func setUp(port: Int) throws -> String {
        let directory = try TestDirectory.make(prefix: "bb-site")
        try (keyText + "\n").write(toFile: directory + "/site.key", atomically: true, encoding: .utf8)
        for id in ["gw-a", "gw-b", "gw-c"] {
            try local(id, directory: directory, port: port).write(
                toFile: directory + "/\(id).yaml", atomically: true, encoding: .utf8)
        }
        return directory
    }

    static var key: SiteKey { try! SiteKey(bytes: Array(keyText.utf8)) }

    func statuses(_ subscriber: TestSubscriber) -> [String: SiteStatus] {
        var out: [String: SiteStatus] = [:]
        for message in subscriber.messages(under: "beaconbridge/house/site/status/") {
            if let status = SiteStatus.parse(Array(message.payload.utf8)) { out[status.gateway] = status }
        }
        return out
    }

    @Test func pushNumbersChecksAndPublishesAndStatusListsTheGateways() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        let directory = try Self.setUp(port: broker.port)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let local = directory + "/gw-a.yaml"
        try Self.shared(region: "office").write(toFile: directory + "/site.yaml", atomically: true, encoding: .utf8)
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await subscriber.start()

        let first = try await BuiltBinary.run(["site", "push", directory + "/site.yaml", "--config", local])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout.contains("published site house version 1"), "\(first.stdout)")
        let second = try await BuiltBinary.run(["site", "push", directory + "/site.yaml", "--config", local])
        #expect(second.stdout.contains("version 2"), "\(second.stdout) \(second.stderr)")
        try await waitUntil("version 2 retained", timeout: 20) {
            subscriber.messages.contains {
                $0.topic == "beaconbridge/house/site/config" && $0.payload.contains("\"version\":2")
            }
        }
        let retained = try #require(subscriber.messages.last { $0.topic == "beaconbridge/house/site/config" })
        let envelope = try SiteEnvelope.parse(Array(retained.payload.utf8)).get()
        #expect(envelope.version == 2 && envelope.yaml == Self.shared(region: "office"))
        #expect(envelope == SiteEnvelope.signed(site: "house", version: 2, yaml: envelope.yaml, key: Self.key))
        // The key is in no topic and no output.
        #expect(!subscriber.messages.contains { $0.payload.contains(Self.keyText) })
        #expect(!first.stdout.contains(Self.keyText) && !first.stderr.contains(Self.keyText))

        // What a gateway would refuse is not published: an older version, a local-only key, a bad value.
        let replay = try await BuiltBinary.run([
            "site", "push", directory + "/site.yaml", "--config", local, "--version", "2",
        ])
        #expect(replay.status == 65 && replay.stderr.contains("not_newer"), "\(replay.stderr)")
        try "mqtt: {host: evil.example}\n".write(toFile: directory + "/bad.yaml", atomically: true, encoding: .utf8)
        let localOnly = try await BuiltBinary.run(["site", "push", directory + "/bad.yaml", "--config", local])
        #expect(localOnly.status == 65 && localOnly.stderr.contains("local_only"), "\(localOnly.stderr)")
        try "regions:\n  - name: x\n    enter: {rssi_abvoe: -70}\n".write(
            toFile: directory + "/bad.yaml", atomically: true, encoding: .utf8)
        let invalid = try await BuiltBinary.run(["site", "push", directory + "/bad.yaml", "--config", local])
        #expect(invalid.status == 65 && invalid.stderr.contains("regions[0].enter"), "\(invalid.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        let configs = subscriber.messages.filter { $0.topic == "beaconbridge/house/site/config" }
        #expect(configs.count == 2, "only the two good pushes were published: \(configs.count)")

        // status: the published version and each gateway's retained status.
        subscriber.publish(
            topic: "beaconbridge/house/site/status/gw-x",
            payload: SiteStatus(
                gateway: "gw-x", site: "house", version: 1, sha256: "abc", state: .refused, subject: 2,
                reason: "bad_signature", message: "the signature does not match", time: Date().timeIntervalSince1970
            ).json, retain: true)
        let status = try await BuiltBinary.run(["site", "status", "--config", local, "--wait", "10"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("published version 2"), "\(status.stdout)")
        let row = try #require(status.lines.first { $0.hasPrefix("gw-x") }, "\(status.stdout)")
        #expect(row.contains("refused") && row.contains("bad_signature"), "\(row)")

        // Usage and configuration errors.
        #expect(try await BuiltBinary.run(["site"]).status == 64)
        #expect(try await BuiltBinary.run(["site", "push", "--config", local]).status == 64)
        #expect(
            try await BuiltBinary.run(["site", "push", directory + "/missing.yaml", "--config", local]).status == 66)
        try "gateway: {id: gw-z}\n".write(toFile: directory + "/nosite.yaml", atomically: true, encoding: .utf8)
        #expect(try await BuiltBinary.run(["site", "status", "--config", directory + "/nosite.yaml"]).status == 78)
        await subscriber.stop()
        broker.stop()
        let unreachable = try await BuiltBinary.run(["site", "status", "--config", local, "--wait", "3"])
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
    }
}
