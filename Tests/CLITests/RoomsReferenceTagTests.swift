import BeaconModel
import Foundation
import TestSupport
import Testing

/// Issue 29: a stationary reference tag declared in a room checks the decisions continuously. The built binary
/// replays gw-a's capture of Tests/Fixtures/rooms/at-rest.json (a tag at rest in room a, 1,200 s at speed 128) to a
/// real mosquitto, once with the tag declared in room b (wrong: a warning names both rooms, the telemetry counts
/// wrong seconds and one tag wrong now) and once declared in room a (right seconds, no wrong ones, no warning).
@Suite(.serialized) struct RoomsReferenceTagTests {
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:3"

    /// The last telemetry counters of one replay with the tag declared in `declared`, and the replay's log.
    static func run(declared: String, capture: String) async throws -> (counters: JSONValue, log: String) {
        let site = try await BrokerSite(prefix: "bb-rooms-reference", patterns: ["beaconbridge/gw-a/telemetry"])
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)
        let path = directory + "/gw-a.yaml"
        try RoomsSite.config(
            "gw-a", gateways: ["gw-a": "a", "gw-b": "b"], directory: directory, port: broker.port,
            rooms: ["reference_tags: {\"\(tag)\": \(declared)}"]
        ).write(toFile: path, atomically: true, encoding: .utf8)
        let process = try DaemonProcess(arguments: ["replay", capture, "--config", path, "--speed", "128"])
        defer { process.signal(SIGKILL) }
        let status = await process.waitForExit(timeout: 120)
        #expect(status == 0, "stderr: \(process.stderr)")
        // The replay's last telemetry comes after the capture's end and counts everything.
        try await waitUntil("the replay's last telemetry", timeout: 30) {
            subscriber.messages(under: "beaconbridge/gw-a/telemetry").count >= 2
        }
        let last = subscriber.messages(under: "beaconbridge/gw-a/telemetry").last?.json?["counters"]
        return (try #require(last), process.stderr)
    }

    @Test func aTagDeclaredInTheWrongRoomIsReportedAndOneInItsRoomCountsRight() async throws {
        let directory = try TestDirectory.make(prefix: "bb-rooms-reference-capture")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", RoomsBrokerRestartTests.scenario, "--capture", directory + "/{gateway}.btsnoop",
        ])
        try #require(simulate.status == 0, "stderr: \(simulate.stderr)")
        let capture = directory + "/gw-a.btsnoop"

        let wrong = try await Self.run(declared: "b", capture: capture)
        func count(_ counters: JSONValue, _ key: String) -> Double? { RoomsGatewaysTests.number(counters[key]) }
        #expect(count(wrong.counters, "rooms_reference_tags") == 1, "\(wrong.counters)")
        #expect((count(wrong.counters, "rooms_reference_wrong_s") ?? 0) > 1000, "\(wrong.counters)")
        #expect(count(wrong.counters, "rooms_reference_right_s") == 0, "\(wrong.counters)")
        #expect(count(wrong.counters, "rooms_reference_wrong_now") == 1, "\(wrong.counters)")
        let warning = wrong.log.split(separator: "\n").first { $0.contains("reference tag decided in another room") }
        #expect(
            warning.map { $0.contains("declared=b") && $0.contains("decided=a") && $0.contains(Self.tag) } == true,
            "\(wrong.log)")

        let right = try await Self.run(declared: "a", capture: capture)
        #expect((count(right.counters, "rooms_reference_right_s") ?? 0) > 1000, "\(right.counters)")
        #expect(count(right.counters, "rooms_reference_wrong_s") == 0, "\(right.counters)")
        #expect(count(right.counters, "rooms_reference_wrong_now") == 0, "\(right.counters)")
        #expect(!right.log.contains("reference tag decided in another room"), "\(right.log)")
    }
}
