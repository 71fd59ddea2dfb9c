import BeaconModel
import BeaconRooms
import Foundation
import TestSupport
import Testing

/// Self-calibration end to end (issue 29): three real gateway processes (the built binary), each replaying its
/// own capture of what it hears of the other two gateways' identity beacons (the site's iBeacon, major/minor
/// naming the gateway: `CalibrationSettings.beaconID(of:)`), to one real mosquitto. The captures carry known
/// receive offsets (+6, 0, -6 dB) on top of reciprocal paths and seeded noise; the leader's retained calibration
/// must come out close to them, and `beaconbridge rooms status` must show it.
@Suite(.serialized) struct RoomsCalibrationGatewaysTests {
    static let gateways = ["gw-a": "a", "gw-b": "b", "gw-c": "c"]
    static let truth: [String: Double] = ["gw-a": 6, "gw-b": 0, "gw-c": -6]
    static let path: [Set<String>: Double] = [["gw-a", "gw-b"]: -68, ["gw-a", "gw-c"]: -80, ["gw-b", "gw-c"]: -72]
    static let start: Double = 1_700_000_000
    static let seconds = 150

    /// What `receiver` hears of the other gateways' identity beacons, once a second each, in whole dB with
    /// ±3 dB of deterministic noise.
    static func observations(receiver: String) -> [Observation] {
        let settings = CalibrationSettings()
        var observations: [Observation] = []
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(receiver.utf8.reduce(0) { $0 &+ Int($1) } + 1)
        for second in 0..<seconds {
            for (index, transmitter) in gateways.keys.sorted().enumerated() where transmitter != receiver {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Double(Int(state >> 61)) - 3.5
                let level = (path[[receiver, transmitter]] ?? -90) + (truth[receiver] ?? 0) + noise
                let (major, minor) = CalibrationSettings.identity(of: transmitter)
                observations.append(
                    Observation(
                        timestamp: start + Double(second) + 0.1 * Double(index), beaconID: "", format: "ibeacon",
                        identifiers: [settings.uuid, String(major), String(minor)],
                        address: BluetoothAddress(rawValue: 0xB0_0000_0000 | UInt64(index + 1)),
                        rssi: Int(level.rounded()), measuredPower: -59))
            }
        }
        return observations
    }

    @Test func threeGatewaysCalibrateThemselvesThroughTheBroker() async throws {
        let site = try await BrokerSite(prefix: "bb-calib")
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)

        try RoomsSite.writeCaptures(gateways: Self.gateways.keys, directory: directory) {
            Self.observations(receiver: $0)
        }
        let processes = try RoomsSite.replay(
            gateways: Self.gateways, directory: directory, port: broker.port, speed: 8,
            rooms: ["replay_wait_for_gateways: 3", "calibration: {window_s: 300, solve_interval_s: 10}"])
        defer { for process in processes.values { process.signal(SIGKILL) } }
        for id in Self.gateways.keys.sorted() {
            let status = await processes[id]?.waitForExit(timeout: 150)
            #expect(status == 0, "\(id) stderr: \(processes[id]?.stderr ?? "")")
        }
        try await Task.sleep(for: .milliseconds(500))

        let calibrations = subscriber.messages.filter { $0.topic == "beaconbridge/rooms/calibration" }
        let last = try #require(calibrations.last?.json, "no calibration published")
        #expect(last["gateway"] == .string("gw-a"), "the leader (lowest id) publishes it")
        guard case let .array(rows)? = last["gateways"] else {
            Issue.record("no gateways in \(calibrations.last?.payload ?? "")")
            return
        }
        var solved: [String: Double] = [:]
        var confidences: [String: Double] = [:]
        for row in rows {
            guard case let .string(id)? = row["gateway"], let receive = number(row["receive_offset_db"]) else {
                continue
            }
            solved[id] = receive
            confidences[id] = number(row["confidence"])
            #expect(number(row["pairs"]) == 2, "\(id): \(row.serialized)")
        }
        let ids = Self.gateways.keys.sorted()
        let mean = ids.reduce(0) { $0 + (solved[$1] ?? 0) } / 3
        let truthMean = ids.reduce(0) { $0 + (Self.truth[$1] ?? 0) } / 3
        var errors: [String] = []
        for id in ids {
            let error = (solved[id] ?? 99) - mean - ((Self.truth[id] ?? 0) - truthMean)
            errors.append("\(id) \(solved[id] ?? .nan) (error \((error * 100).rounded() / 100))")
            #expect(abs(error) < 1.5, "\(id): solved \(solved[id] ?? .nan), truth \(Self.truth[id] ?? 0)")
            #expect((confidences[id] ?? 0) > 0.5)
        }
        print("self-calibration (receive offsets, centred error): \(errors.joined(separator: ", "))")
        // Identity beacons are never room evidence: no room event names one.
        let settings = CalibrationSettings()
        for id in ids {
            #expect(
                !subscriber.messages.contains {
                    $0.topic.hasPrefix("beaconbridge/rooms/") && $0.payload.contains(settings.beaconID(of: id))
                })
        }
        let telemetry = subscriber.messages.last { $0.topic == "beaconbridge/gw-b/telemetry" }?.json?["counters"]
        #expect((number(telemetry?["rooms_identity_sightings"]) ?? 0) > 100, "\(String(describing: telemetry))")
        #expect(number(telemetry?["rooms_beacons_tracked"]) == 0)

        // `rooms status` reads the retained calibration and availability.
        let status = try await BuiltBinary.run([
            "rooms", "status", "--config", directory + "/gw-b.yaml", "--wait", "10",
        ])
        #expect(status.status == 0, "stderr: \(status.stderr)")
        print("rooms status:\n\(status.stdout)")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("gateway") == true)
        for id in ids {
            let line = try #require(lines.first { $0.hasPrefix(id + " ") }, "\(status.stdout)")
            let fields = line.split(separator: " ").map(String.init)
            #expect(fields.count == 9, "\(line)")
            #expect(
                fields.count > 3 && Double(fields[3]).map { abs($0 - (solved[id] ?? 99)) < 0.01 } == true, "\(line)")
            #expect(fields.count > 2 && fields[2] == "no", "the replays ended: offline (\(line))")
        }
        #expect(status.stdout.contains("calibration: published by gw-a"))

        // A broker that is not there: 69.
        broker.stop()
        let unreachable = try await BuiltBinary.run([
            "rooms", "status", "--config", directory + "/gw-b.yaml", "--wait", "5",
        ])
        #expect(unreachable.status == 69, "stdout: \(unreachable.stdout) stderr: \(unreachable.stderr)")
    }

    func number(_ value: JSONValue?) -> Double? {
        switch value {
        case let .int(v)?: Double(v)
        case let .double(v)?: v
        default: nil
        }
    }
}
