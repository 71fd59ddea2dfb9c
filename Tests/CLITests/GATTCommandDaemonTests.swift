import BeaconModel
import Foundation
import TestSupport
import Testing

/// `gatt.enabled` in the built binary against a real mosquitto, with no device reachable (the test machine's
/// adapter is absent or cannot reach these addresses; a replay scans nothing live): every command gets a
/// well-formed reply on `<base>/reply/gatt/<op>` carrying its id, bad requests get `bad_request`, a device not
/// in `allowed_devices` gets `not_allowed`, and the gateway keeps delivering the capture's events meanwhile.
@Suite struct GATTCommandDaemonTests {
    static let allowed = "C0:FF:EE:00:00:01"

    @Test func commandsGetErrorRepliesWithTheirIdAndEventsKeepFlowing() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(
            """
            gatt:
              enabled: true
              slots: 1
              connect_timeout_s: 2
              allowed_devices: [\(Self.allowed)]
            """)
        let now = Date().timeIntervalSince1970
        let capture = try bed.writeCapture(
            "walk.btsnoop", DaemonTestBed.iBeaconObservations(minor: 1, start: now, duration: 40, interval: 0.5))
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let daemon = try DaemonProcess(arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath])
        try await waitUntil("the gateway replays", timeout: 60) { daemon.stderr.contains("replaying capture") }
        #expect(daemon.stderr.contains("gatt commands on"), "stderr: \(daemon.stderr)")

        let base = bed.topicBase
        @Sendable func replies(_ op: String) -> [JSONValue] {
            subscriber.messages(under: "\(base)/reply/gatt/\(op)").compactMap(\.json)
        }
        @Sendable func reply(_ op: String, id: String?) -> JSONValue? {
            replies(op).first { $0["id"] == (id.map(JSONValue.string) ?? .null) }
        }
        // The subscription goes out once connected: ask until the first answer comes (bounded).
        let probe = #"{"id":"probe","address":"\#(Self.allowed)","uuid":"2a19"}"#
        try await waitUntil("a reply to the first command", timeout: 60) {
            if reply("read", id: "probe") == nil {
                subscriber.publish(topic: "\(base)/command/gatt/read", payload: probe)
            }
            return reply("read", id: "probe") != nil
        }
        let sightingsBefore = subscriber.messages(under: "\(base)/sighting/").count

        let commands: [(op: String, payload: String)] = [
            ("read", #"{"id":"r1","address":"\#(Self.allowed)","uuid":"2a19"}"#),
            (
                "write",
                #"{"id":"w1","address":"\#(Self.allowed)","uuid":"6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10","value":"cafe01"}"#
            ),
            ("info", #"{"id":"i1","address":"\#(Self.allowed)"}"#),
            ("read", #"{"id":"n1","address":"C0:FF:EE:00:00:09","uuid":"2a19"}"#),
            ("read", "{not json"),
            ("read", #"{"id":"u1","address":"\#(Self.allowed)","uuid":"2a1"}"#),
            ("write", #"{"id":"h1","address":"\#(Self.allowed)","uuid":"2a19","value":"xyz"}"#),
            ("frobnicate", #"{"id":"o1","address":"\#(Self.allowed)"}"#),
            ("read", "{\"id\":\"big\",\"pad\":\"" + String(repeating: "x", count: 6000) + "\"}"),
        ]
        for command in commands {
            subscriber.publish(topic: "\(base)/command/gatt/\(command.op)", payload: command.payload)
        }

        let expected: [(op: String, id: String?)] = [
            ("read", "r1"), ("write", "w1"), ("info", "i1"), ("read", "n1"), ("read", nil), ("read", "u1"),
            ("write", "h1"), ("invalid", "o1"),
        ]
        try await waitUntil("every reply", timeout: 60) { expected.allSatisfy { reply($0.op, id: $0.id) != nil } }
        // The link could not be used (no adapter here, or no device at these addresses): a typed error with the
        // step, never ok, never a crash. One slot: the three were answered one after the other.
        let linkKinds: Set<String> = ["adapter", "connect_timeout", "unreachable", "refused", "system", "busy"]
        for id in ["r1", "w1", "i1"] {
            let op = id == "r1" ? "read" : id == "w1" ? "write" : "info"
            let answer = try #require(reply(op, id: id))
            #expect(answer["ok"] == .bool(false))
            guard case .string(let kind)? = answer["error"]?["kind"], case .string(let step)? = answer["error"]?["step"]
            else {
                Issue.record("no error kind/step in \(answer)")
                continue
            }
            #expect(linkKinds.contains(kind), "\(answer)")
            #expect(!step.isEmpty)
        }
        #expect(reply("read", id: "n1")?["error"]?["kind"] == .string("not_allowed"))
        #expect(reply("read", id: nil)?["error"]?["kind"] == .string("bad_request"))
        #expect(reply("read", id: "u1")?["error"]?["step"] == .string("uuid"))
        #expect(reply("write", id: "h1")?["error"]?["step"] == .string("value"))
        #expect(reply("invalid", id: "o1")?["error"]?["kind"] == .string("unknown_operation"))
        // The oversized one is refused too (no id: it was not parsed).
        try await waitUntil("the oversized command's reply", timeout: 30) {
            replies("read").contains { ($0["error"]?["message"]).map { "\($0)".contains("at most 4096") } ?? false }
        }

        // Events keep flowing while commands are handled.
        try await waitUntil("sightings after the commands", timeout: 30) {
            subscriber.messages(under: "\(base)/sighting/").count > sightingsBefore + 3
        }
        #expect(daemon.stderr.contains("gatt command failed"))
        let status = await daemon.waitForExit(timeout: 90)
        #expect(status == 0, "stderr: \(daemon.stderr)")
        #expect(!daemon.stderr.contains("Fatal error"))
    }
}
