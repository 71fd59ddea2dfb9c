import BeaconModel
import BeaconTracking
import Foundation
import TestSupport
import Testing

/// `beaconbridge devices status` (issue 30: each device's learned interval and away time where a user can see
/// them): a real gateway process replays a capture of one 2 Hz beacon to a real mosquitto; the command reads the
/// retained presence back and prints the learned interval; a foreign message on a presence topic is counted, not
/// a crash; an unreachable broker is 69.
@Suite(.serialized) struct DevicesStatusTests {
    static let start: Double = 1_700_000_000

    /// One iBeacon at 2 Hz for 40 s, -60 dBm.
    static func observations() -> [Observation] {
        (0..<80).map { index in
            Observation(
                timestamp: start + Double(index) * 0.5, beaconID: "", format: "ibeacon",
                identifiers: ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "7", "9"],
                address: BluetoothAddress(rawValue: 0xC0_1122_3344_55), rssi: -60, measuredPower: -59)
        }
    }

    @Test func theRetainedPresenceShowsTheLearnedIntervalPerGateway() async throws {
        let directory = try TestDirectory.make(prefix: "bb-devices")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        try Data(SyntheticCapture(Self.observations()).bytes).write(
            to: URL(fileURLWithPath: directory + "/hall.btsnoop"))
        let config = directory + "/hall.yaml"
        try """
        gateway: {id: gw-hall}
        mqtt: {host: 127.0.0.1, port: \(broker.port)}
        outbox: {path: \(directory)/hall.sqlite}
        beacons:
          - {id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:9", name: hall-tag}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let replay = try await BuiltBinary.run(["replay", directory + "/hall.btsnoop", "--config", config])
        try #require(replay.status == 0, "stderr: \(replay.stderr)")

        // Someone else's message on a presence topic of another gateway: counted, not shown, not a crash.
        let other = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await other.start()
        other.publish(topic: "beaconbridge/gw-x/presence/junk", payload: "{not json", retain: true)
        try await waitUntil("the junk echoed", timeout: 30) {
            other.messages.contains { $0.topic == "beaconbridge/gw-x/presence/junk" }
        }
        await other.stop()

        let status = try await BuiltBinary.run(["devices", "status", "--config", config, "--wait", "10"])
        #expect(status.status == 0, "stderr: \(status.stderr)")
        print("devices status:\n\(status.stdout)")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("beacon") == true, "\(status.stdout)")
        let row = try #require(lines.first { $0.hasPrefix("ibeacon:") }, "\(status.stdout)")
        let fields = row.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        try #require(fields.count == 7, "\(row)")
        #expect(fields[1] == "hall-tag" && fields[2] == "gw-hall")
        #expect(fields[3] == "away", "the replay's end turns it away: \(row)")
        let interval = try #require(Double(fields[4]), "\(row)")
        #expect(abs(interval - 0.5) < 0.1, "learned interval \(interval)")
        #expect(Double(fields[5]) != nil, "\(row)")
        #expect(status.stdout.contains("1 message(s) on presence topics were not presence events"))

        broker.stop()
        let unreachable = try await BuiltBinary.run(["devices", "status", "--config", config, "--wait", "3"])
        #expect(unreachable.status == 69, "stdout: \(unreachable.stdout) stderr: \(unreachable.stderr)")
        #expect(try await BuiltBinary.run(["devices"]).status == 64)
    }
}
