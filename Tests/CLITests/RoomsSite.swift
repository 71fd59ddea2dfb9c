import BeaconModel
import BeaconTracking
import Foundation
import TestSupport
import Testing

/// The gateways of a rooms test site: each one's YAML, written beside its capture, and `beaconbridge replay` of
/// that capture started against the test's broker. Shared by the rooms tests that run several daemons.
enum RoomsSite {
    /// A gateway's configuration: telemetry every 5 s, sightings published every second, quick reconnects, its
    /// outbox in `directory`, and `rooms:` enabled with the site's gateways, a 0.5 s leader settle, and the
    /// extra `rooms:` lines (two-space indented keys such as `receiver_offsets_db: {...}`).
    static func config(
        _ id: String, gateways: [String: String], directory: String, port: Int, rooms extra: [String] = []
    ) -> String {
        let rooms = gateways.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let lines =
            [
                "gateway: {id: \(id), room: \(gateways[id] ?? "")}",
                "telemetry: {enabled: true, interval_s: 5}",
                "tracking: {publish: {sighting_interval_s: 1}}",
                "mqtt: {host: 127.0.0.1, port: \(port), reconnect_min_s: 100ms, reconnect_max_s: 500ms}",
                "outbox: {path: \(directory)/\(id).sqlite}",
                "rooms:",
                "  enabled: true",
                "  gateways: {\(rooms)}",
                "  leader_settle_s: 0.5",
            ] + extra.map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `simulate --capture` of the rooms `scenario` into `directory` (one capture per gateway,
    /// `<directory>/<gateway>.btsnoop`): the simulator's ground truth.
    static func simulate(_ scenario: String, into directory: String) async throws -> [RoomsGatewaysTests.Stay] {
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", scenario, "--capture", directory + "/{gateway}.btsnoop",
        ])
        guard simulate.status == 0 else { throw TestFailure("simulate failed: \(simulate.stderr)") }
        return RoomsGatewaysTests.truth(simulate.stdout)
    }

    /// Matches each stay, in order, to a decision for its room (`decisions` of one beacon, as delivered: room and
    /// capture time) made at most 5 s before the stay began and at most `within` s after it began (or after the
    /// 10 s warm-up from `start`); records an issue naming each stay not announced in time. Returns how many were.
    static func announced(
        _ stays: [RoomsGatewaysTests.Stay], by decisions: [(room: String, time: Double)], start: Double,
        within: Double = 45, log: String
    ) -> Int {
        var next = 0
        var matched = 0
        for stay in stays {
            guard
                let found = decisions[next...].firstIndex(where: {
                    $0.room == stay.room && $0.time >= stay.start - 5 && $0.time <= max(stay.start, start + 10) + within
                })
            else {
                Issue.record(
                    "\(stay.beacon): the stay in \(stay.room) from t+\(Int(stay.start - start)) s was not announced in time:\n\(log)"
                )
                continue
            }
            matched += 1
            next = found + 1
        }
        return matched
    }

    /// Writes `<directory>/<id>.btsnoop` for every gateway: a synthetic capture of what that gateway hears.
    static func writeCaptures(
        gateways: some Collection<String>, directory: String, observations: (String) -> [Observation]
    ) throws {
        for id in gateways.sorted() {
            let capture = SyntheticCapture(observations(id))
            try Data(capture.bytes).write(to: URL(fileURLWithPath: directory + "/\(id).btsnoop"))
        }
    }

    /// Cuts the capture at `path` after the record at Unix time `cutoff`, then appends the last kept record
    /// again an hour later: a gateway replaying it (with `--max-gap 3600`) has heard nothing of the world past
    /// `cutoff` and then waits instead of ending, until the test stops it, however slowly the machine runs.
    static func stall(capture path: String, after cutoff: Double) throws {
        let (datalink, records, error) = try BTSnoopReader.readAll(
            Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        if let error { throw TestFailure("\(path): \(error)") }
        let limit = BTSnoopTime.btsnoopMicros(fromUnixSeconds: cutoff)
        let kept = records.filter { $0.timestampMicros <= limit }
        guard let last = kept.last else { throw TestFailure("\(path) has no record before \(cutoff)") }
        var late = last
        late.timestampMicros += 3_600_000_000
        let writer = BTSnoopWriter(datalink: datalink)
        var bytes = writer.header()
        for record in kept + [late] {
            bytes += writer.record(
                payload: record.payload, flags: record.flags, drops: record.drops,
                timestampMicros: record.timestampMicros)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Writes each gateway's configuration to `<directory>/<id>.yaml` and starts the replay of
    /// `<directory>/<id>.btsnoop` at `speed`, in gateway order, each with its `arguments` added.
    static func replay(
        gateways: [String: String], directory: String, port: Int, speed: Int, rooms extra: [String] = [],
        arguments: [String: [String]] = [:]
    ) throws -> [String: DaemonProcess] {
        var processes: [String: DaemonProcess] = [:]
        for id in gateways.keys.sorted() {
            let path = directory + "/\(id).yaml"
            try config(id, gateways: gateways, directory: directory, port: port, rooms: extra).write(
                toFile: path, atomically: true, encoding: .utf8)
            processes[id] = try DaemonProcess(
                arguments: [
                    "replay", directory + "/\(id).btsnoop", "--config", path, "--speed", String(speed),
                ] + (arguments[id] ?? []))
        }
        return processes
    }
}
