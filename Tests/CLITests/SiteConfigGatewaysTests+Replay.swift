import BeaconModel
import BeaconTracking
import Foundation
import SiteConfig
import TestSupport
import Testing

extension SiteConfigGatewaysTests {
    /// Each gateway hears one iBeacon at -60 dBm every second for ten minutes (the test ends long before).
    static func capture(_ id: String) -> [Observation] {
        let minor = ["gw-a": 1, "gw-b": 2, "gw-c": 3][id] ?? 9
        return (0..<600).map { index in
            Observation(
                timestamp: start + Double(index), beaconID: "", format: "ibeacon",
                identifiers: [uuid, "1", String(minor)],
                address: BluetoothAddress(rawValue: 0xC0_FFEE_000000 | UInt64(minor)), rssi: -60, measuredPower: -59)
        }
    }

    static func startGateway(_ id: String, directory: String) throws -> DaemonProcess {
        try DaemonProcess(arguments: [
            "replay", directory + "/\(id).btsnoop", "--config", directory + "/\(id).yaml", "--speed", "1",
        ])
    }

    func waitForAll(
        _ what: String, _ subscriber: TestSubscriber, timeout: Double = 30,
        _ condition: @escaping @Sendable (SiteStatus) -> Bool
    ) async throws {
        try await waitUntil(what, timeout: timeout) { [self] in
            let all = statuses(subscriber)
            return ["gw-a", "gw-b", "gw-c"].allSatisfy { all[$0].map(condition) ?? false }
        }
    }

    @Test func threeGatewaysApplyRefuseRollBackAndRestartOnTheLastGoodVersion() async throws {
        let broker = try MosquittoProcess(persistent: true)
        try await broker.start()
        defer { broker.stop() }
        let directory = try Self.setUp(port: broker.port)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateways = ["gw-a", "gw-b", "gw-c"]
        for id in gateways {
            try Data(SyntheticCapture(Self.capture(id)).bytes).write(
                to: URL(fileURLWithPath: directory + "/\(id).btsnoop"))
        }
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await subscriber.start()
        var processes: [String: DaemonProcess] = [:]
        for id in gateways { processes[id] = try Self.startGateway(id, directory: directory) }
        defer { for process in processes.values { process.signal(SIGKILL) } }
        @Sendable func logs(_ running: [String: DaemonProcess]) -> String {
            gateways.map { "\($0): \(running[$0]?.stderr ?? "")" }.joined(separator: "\n")
        }
        // Each starts on its local file alone (no region) and says so.
        try await waitForAll("every gateway on its local file", subscriber) { $0.state == .local && $0.version == 0 }

        // 1. A push: applied everywhere, committed after the round trip; the pushed region decides.
        try Self.shared(region: "office").write(toFile: directory + "/site.yaml", atomically: true, encoding: .utf8)
        let push = try await BuiltBinary.run([
            "site", "push", directory + "/site.yaml", "--config", directory + "/gw-a.yaml",
        ])
        try #require(push.status == 0, "\(push.stderr)")
        try await waitForAll("version 1 applied everywhere", subscriber) { $0.state == .applied && $0.version == 1 }
        try await waitUntil("the pushed region's events", timeout: 30) {
            gateways.allSatisfy { id in
                subscriber.messages(under: "beaconbridge/\(id)/region/office/").contains {
                    $0.payload.contains("enter")
                }
            }
        }
        for id in gateways {
            let kept = try String(contentsOfFile: directory + "/\(id)-site.json", encoding: .utf8)
            #expect(try SiteEnvelope.parse(Array(kept.utf8)).get().version == 1)
        }

        // 2. Bad pushes: each refused everywhere with its reason; version 1 keeps running.
        let good = SiteEnvelope.signed(site: "house", version: 2, yaml: Self.shared(region: "tampered"), key: Self.key)
        var tampered = good
        tampered.yaml = Self.shared(region: "evil")
        let other = try SiteKey(bytes: Array("another-site-key-of-at-least-32-bytes!!".utf8))
        let bad: [(String, String)] = [
            ("hash_mismatch", tampered.json),
            (
                "bad_signature",
                SiteEnvelope.signed(site: "house", version: 2, yaml: Self.shared(region: "evil"), key: other).json
            ),
            (
                "not_newer",
                SiteEnvelope.signed(site: "house", version: 1, yaml: Self.shared(region: "evil"), key: Self.key).json
            ),
            ("malformed", String(good.json.prefix(good.json.count / 2))),
            (
                "too_large",
                SiteEnvelope.signed(
                    site: "house", version: 2, yaml: Self.shared(region: "evil") + String(repeating: "#", count: 9_000),
                    key: Self.key
                ).json
            ),
            (
                "local_only",
                SiteEnvelope.signed(
                    site: "house", version: 2, yaml: "mqtt: {host: 127.0.0.2}\n" + Self.shared(region: "evil"),
                    key: Self.key
                ).json
            ),
        ]
        for (reason, payload) in bad {
            subscriber.publish(topic: "beaconbridge/house/site/config", payload: payload, retain: true)
            try await waitForAll("\(reason) refused everywhere", subscriber) {
                $0.state == .refused && $0.reason == reason && $0.version == 1
            }
        }
        #expect(!subscriber.messages.contains { $0.topic.contains("/region/evil/") }, "nothing of a refusal applied")
        #expect(!logs(processes).contains(Self.keyText))

        // 3. A push after which the broker goes away: rolled back within the bound and reported once it is back.
        try Self.shared(region: "hall").write(toFile: directory + "/site.yaml", atomically: true, encoding: .utf8)
        let second = try await BuiltBinary.run([
            "site", "push", directory + "/site.yaml", "--config", directory + "/gw-a.yaml", "--version", "3",
        ])
        try #require(second.status == 0, "\(second.stderr)")
        try await waitForAll("version 3 applying everywhere", subscriber, timeout: 20) {
            $0.state == .applying && $0.subject == 3
        }
        broker.stop()
        let stoppedAt = Date()
        let running = processes
        // The bound is 24 s and the probe leaves at 8 s, so the broker is gone before any probe even on a loaded
        // machine (with 9 s, the probe left at 3 s: a slow stop could let it through, and nothing rolled back).
        try await waitUntil("every gateway rolled back", timeout: 45) {
            logs(running).components(separatedBy: "rolled back").count - 1 >= 3
        }
        #expect(Date().timeIntervalSince(stoppedAt) >= 3, "not before the probe (at 8 s of the 24 s bound)")
        try await broker.start()
        try await waitForAll("rolled back reported", subscriber) {
            $0.state == .rolledBack && $0.version == 1 && $0.subject == 3 && $0.reason == "broker_unreachable"
        }

        // 4. A restart comes back on the last good version (the retained push cleared first, else it is tried
        // again); a corrupted state file is refused and that gateway starts on its local file alone.
        subscriber.publish(topic: "beaconbridge/house/site/config", payload: "", retain: true)
        try await Task.sleep(for: .milliseconds(500))
        for id in ["gw-a", "gw-b"] {
            processes[id]?.signal(SIGTERM)
            _ = await processes[id]?.waitForExit(timeout: 30)
        }
        try "{\"format\": 1, \"site\": \"house\", \"version\": 1, \"sha".write(
            toFile: directory + "/gw-b-site.json", atomically: true, encoding: .utf8)
        let before = subscriber.messages.count
        processes["gw-a"] = try Self.startGateway("gw-a", directory: directory)
        processes["gw-b"] = try Self.startGateway("gw-b", directory: directory)
        try await waitUntil("both restarted and reported", timeout: 30) {
            let fresh = subscriber.messages.dropFirst(before).filter { $0.topic.contains("/site/status/") }
            return fresh.contains { $0.topic.hasSuffix("/gw-a") } && fresh.contains { $0.topic.hasSuffix("/gw-b") }
        }
        let all = statuses(subscriber)
        #expect(all["gw-a"]?.state == .applied && all["gw-a"]?.version == 1, "\(String(describing: all["gw-a"]))")
        #expect(all["gw-b"]?.state == .local && all["gw-b"]?.version == 0, "\(String(describing: all["gw-b"]))")
        let restartedA = processes["gw-a"]?.stderr ?? ""
        #expect(restartedA.contains("starting on the last committed site configuration"), "\(restartedA)")
        let restartedB = processes["gw-b"]?.stderr ?? ""
        #expect(restartedB.contains("the state file is refused"), "\(restartedB)")
        // The local part untouched: each gateway's id and broker are its own file's.
        try await waitUntil("gw-a publishes under its own id", timeout: 30) {
            subscriber.messages.dropFirst(before).contains { $0.topic.hasPrefix("beaconbridge/gw-a/region/office/") }
        }

        let table = try await BuiltBinary.run(["site", "status", "--config", directory + "/gw-c.yaml", "--wait", "10"])
        print("site status:\n\(table.stdout)")
        #expect(table.lines.contains { $0.hasPrefix("gw-c") && $0.contains("rolled_back") }, "\(table.stdout)")
    }
}
