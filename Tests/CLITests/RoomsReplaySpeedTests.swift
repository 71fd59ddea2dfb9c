import BeaconModel
import Foundation
import TestSupport
import Testing

/// Issue 29: a replay's room decisions depend only on its capture. One gateway (the built binary, a real
/// mosquitto) replays the same capture (gw-b's file of the simulated three-rooms world,
/// Tests/Fixtures/rooms/three-gateways.json, all three gateways in the site, the other two silent) at speed 16 and
/// at speed 128, with `leader_settle_s: 2`. The room decisions it publishes (beacon, room, decision number,
/// capture time) must be the same list. Before, the settle ran on the wall clock (32 s of capture silent at
/// speed 16, 256 s at speed 128) and the wall-clock tick advanced the arbiter and the engine at capture times
/// that depended on the speed; and the coordinator took in its own `online` at a wall-clock moment during the
/// capture. Each run's last telemetry, published after the capture's end, counts every decision it published.
@Suite(.serialized) struct RoomsReplaySpeedTests {
    struct Decision: Equatable, CustomStringConvertible {
        var beacon: String
        var room: String?
        var decision: Int64
        var time: Double
        var description: String { "\(beacon.suffix(3)) #\(decision) \(room ?? "none") at \(time)" }
    }

    static func config(directory: String, port: Int, run: String) -> String {
        """
        gateway: {id: gw-b, room: b}
        telemetry: {enabled: true, interval_s: 3600}
        tracking: {publish: {sighting_interval_s: 1}}
        mqtt: {host: 127.0.0.1, port: \(port), reconnect_min_s: 100ms, reconnect_max_s: 500ms}
        outbox: {path: \(directory)/\(run).sqlite}
        rooms:
          enabled: true
          gateways: {gw-a: a, gw-b: b, gw-c: c}
          leader_settle_s: 2
        """
    }

    /// The room decisions of one replay at `speed`, against a broker of its own (no retained state carried over).
    static func decisions(capture: String, directory: String, speed: Int) async throws -> [Decision] {
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        let subscriber = try TestSubscriber(
            port: broker.port, patterns: ["beaconbridge/rooms/#", "beaconbridge/gw-b/telemetry"])
        try await subscriber.start()
        defer { Task { await subscriber.stop() } }
        let path = directory + "/speed-\(speed).yaml"
        try config(directory: directory, port: broker.port, run: "speed-\(speed)").write(
            toFile: path, atomically: true, encoding: .utf8)
        let process = try DaemonProcess(arguments: [
            "replay", capture, "--config", path, "--speed", String(speed),
        ])
        defer { process.signal(SIGKILL) }
        let status = await process.waitForExit(timeout: 120)
        #expect(status == 0, "speed \(speed): stderr \(process.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        // The replay's last telemetry (published after its end) counts every decision it made.
        let telemetry = subscriber.messages(under: "beaconbridge/gw-b/telemetry").compactMap(\.json)
        #expect(telemetry.count == 2, "speed \(speed): one at the start, one after the end: \(telemetry.count)")
        let published = subscriber.messages(under: "beaconbridge/rooms/").count { $0.json?["event"] == .string("room") }
        #expect(
            telemetry.last.flatMap { RoomsGatewaysTests.number($0["counters"]?["rooms_published"]) }
                == Double(published))
        return subscriber.messages(under: "beaconbridge/rooms/").compactMap { message in
            guard let json = message.json, json["event"] == .string("room"),
                case let .string(beacon)? = json["beacon_id"], case let .int(number)? = json["decision"],
                let time = RoomsGatewaysTests.number(json["time"])
            else { return nil }
            var room: String?
            if case let .string(name)? = json["room"] { room = name }
            return Decision(beacon: beacon, room: room, decision: number, time: time)
        }
        .sorted { ($0.beacon, $0.decision) < ($1.beacon, $1.decision) }
    }

    @Test func theSameCaptureDecidesTheSameRoomsAtAnySpeed() async throws {
        let directory = try TestDirectory.make(prefix: "bb-rooms-speed")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", RoomsGatewaysTests.scenario, "--capture", directory + "/{gateway}.btsnoop",
        ])
        try #require(simulate.status == 0, "stderr: \(simulate.stderr)")
        let capture = directory + "/gw-b.btsnoop"

        let slow = try await Self.decisions(capture: capture, directory: directory, speed: 16)
        let fast = try await Self.decisions(capture: capture, directory: directory, speed: 128)
        print("rooms decisions at speed 16:\n\(slow.map(\.description).joined(separator: "\n"))")
        #expect(slow.count >= 2, "the replay decided rooms for both beacons: \(slow)")
        #expect(slow.first.map { $0.time - RoomsGatewaysTests.start < 20 } == true, "first decision early: \(slow)")
        #expect(fast == slow, "speed 128:\n\(fast.map(\.description).joined(separator: "\n"))")
    }
}
