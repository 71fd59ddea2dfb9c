import BeaconModel
import BeaconTracking
import Foundation
import TestSupport

/// A gateway under test: a temp directory with its config file and outbox database, a real broker on a free
/// loopback port (started on demand), and synthetic captures built from observations.
final class DaemonTestBed: Sendable {
    let directory: String
    let broker: MosquittoProcess
    let gatewayID = "testgw"
    static let uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"

    /// - Parameter persistentBroker: the broker keeps sessions and queued messages (QoS 0 too: sightings)
    ///   across a restart, for a persistent subscriber that reconnects after the gateway did.
    /// - Parameter brokerConfig: lines added to the broker's listener configuration (e.g. `max_packet_size`).
    init(persistentBroker: Bool = false, brokerConfig: String = "") throws {
        directory = try TestDirectory.make(prefix: "bb-daemon")
        broker = try MosquittoProcess(extraConfig: brokerConfig, persistent: persistentBroker)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    var configPath: String { directory + "/beaconbridge.yaml" }
    var outboxPath: String { directory + "/outbox.sqlite" }

    /// Writes the bed's config: the gateway (in `room`), `telemetry` (a setting of that section; none when nil),
    /// the bed's broker with fast reconnects (and `mqtt`, more settings of that section), the outbox at `outbox`
    /// (the bed's by default), then `extra` YAML. Tests that check `FILE:LINE:COL` lines count on this layout
    /// (StartupCheckTests: no room, no telemetry).
    func writeConfig(
        _ extra: String = "", room: String? = "lab", telemetry: String? = "interval_s: 5", outbox: String? = nil,
        mqtt: [String] = []
    ) throws {
        var lines = ["gateway:", "  id: \(gatewayID)"]
        if let room { lines.append("  room: \(room)") }
        if let telemetry { lines += ["telemetry:", "  \(telemetry)"] }
        lines += [
            "mqtt:", "  host: 127.0.0.1", "  port: \(broker.port)", "  reconnect_min_s: 100ms",
            "  reconnect_max_s: 500ms",
        ]
        lines += mqtt.map { "  " + $0 }
        lines += [
            "outbox:", "  path: \(outbox ?? outboxPath)", extra,
        ]
        try lines.joined(separator: "\n").write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// An iBeacon (major 1, minor `minor`) heard every `interval` seconds for `duration` seconds from `start`.
    static func iBeaconObservations(minor: Int, start: Double, duration: Double, interval: Double, rssi: Int = -60)
        -> [Observation]
    {
        stride(from: 0.0, to: duration, by: interval).map { offset in
            Observation(
                timestamp: start + offset, beaconID: "", format: "ibeacon", identifiers: [uuid, "1", String(minor)],
                address: BluetoothAddress(rawValue: 0xC0_FFEE_000000 | UInt64(minor)), rssi: rssi, measuredPower: -59)
        }
    }

    /// Writes a btsnoop capture of the observations (sorted by time) and returns its path.
    func writeCapture(_ name: String, _ observations: [Observation]) throws -> String {
        let capture = SyntheticCapture(observations.sorted { $0.timestamp < $1.timestamp })
        let path = directory + "/" + name
        try Data(capture.bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A subscriber to every gateway topic on the bed's broker, connected and subscribed.
    func startSubscriber() async throws -> TestSubscriber {
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await subscriber.start()
        return subscriber
    }

    func beaconID(minor: Int) -> String { "ibeacon:\(Self.uuid):1:\(minor)" }

    /// A region `office` of the bed's iBeacons, entered above -70 dBm (the `balanced` preset), as `extra` YAML.
    static let officeRegion = """
        regions:
          - name: office
            match:
              format: ibeacon
              uuid: \(uuid)
            enter:
              rssi_above: -70
        """
    var topicBase: String { "beaconbridge/\(gatewayID)" }
}

extension TestSubscriber.Message {
    /// The envelope's sequence number, nil for messages that are not events (availability, discovery).
    var sequence: UInt64? {
        guard case let .int(value)? = json?["seq"] else { return nil }
        return UInt64(value)
    }

    func string(_ key: String) -> String? {
        guard case let .string(value)? = json?[key] else { return nil }
        return value
    }
}

/// The value of `key=` in the last logfmt line of `log` that contains `message`.
func logValue(_ log: String, message: String, key: String) -> String? {
    guard let line = log.split(separator: "\n").last(where: { $0.contains(message) }) else { return nil }
    for field in line.split(separator: " ") where field.hasPrefix(key + "=") {
        return String(field.dropFirst(key.count + 1))
    }
    return nil
}
