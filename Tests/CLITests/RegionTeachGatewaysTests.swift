import BeaconModel
import BeaconTracking
import Foundation
import TestSupport
import Testing

/// Teaching a region end to end (issue 43; docs/teach.md): two real gateway processes (the built binary) replay
/// captures of one tag to one real mosquitto, each with its own SQLite database. `beaconbridge regions teach`
/// sends the MQTT command while they replay; each gateway records the tag in capture time and stores, publishes
/// (retained) and applies the boundary it heard. The tag then moves to -74 dBm at gw-a, below the configured
/// `rssi_above: -70` and above the taught -80: it enters only because of the teach. A restart keeps it (the
/// database), the other gateway has gw-a's record (retained), a forget clears it. Bad input is refused without
/// losing anything.
@Suite(.serialized) struct RegionTeachGatewaysTests {
    static let start: Double = 1_700_000_000
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let tag = "ibeacon:\(uuid):7:9"
    static let other = "ibeacon:\(uuid):7:8"
    /// Seconds of capture at the boundary (-80 at gw-a), then at -74.
    static let boundarySeconds = 120.0
    static let insideSeconds = 60.0

    /// The tag 5 times a second at `level` -1, 0, +1 dB in turn, from `from` for `seconds`.
    static func tag(_ level: Int, from: Double, seconds: Double, minor: Int = 9) -> [Observation] {
        stride(from: 0.0, to: seconds, by: 0.2).enumerated().map { index, offset in
            Observation(
                timestamp: start + from + offset, beaconID: "", format: "ibeacon",
                identifiers: [uuid, "7", String(minor)],
                address: BluetoothAddress(rawValue: 0xC0_0000_0700 | UInt64(minor)),
                rssi: level + index % 3 - 1, measuredPower: -59)
        }
    }

    /// The enter and exit levels a boundary taught at `level` sets (`TaughtRegionLink.levels`, whose body may
    /// place them relative to the boundary), as the CLI (`-80`), the status table (`-80/-85`, 0.1 dB) and the log
    /// (`-80.0`, 0.01 dB) print them.
    static func taught(_ level: Double) -> (cli: String, table: String, log: String) {
        let levels =
            TaughtRegionLink(boundary: TaughtLevel(level: level, spread: 1.5, reports: 50, seconds: 10))
            .levels ?? (enter: .nan, exit: .nan)
        func cli(_ value: Double) -> String {
            let rounded = (value * 100).rounded() / 100
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        func table(_ value: Double) -> String { cli((value * 10).rounded() / 10) }
        func log(_ value: Double) -> String { String((value * 100).rounded() / 100) }
        return (
            "enter \(cli(levels.enter)) dBm, exit \(cli(levels.exit)) dBm",
            "\(table(levels.enter))/\(table(levels.exit))",
            "(\(log(levels.enter))/\(log(levels.exit)))"
        )
    }

    /// Whether a line of `log` holds every one of `parts`.
    static func logged(_ log: String, _ parts: String...) -> Bool {
        log.split(separator: "\n").contains { line in parts.allSatisfy { line.contains($0) } }
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case let .int(v)?: Double(v)
        case let .double(v)?: v
        default: nil
        }
    }

    static func config(_ id: String, directory: String, port: Int) -> String {
        """
        gateway: {id: \(id)}
        tracking: {publish: {sighting_interval_s: 1}}
        mqtt: {host: 127.0.0.1, port: \(port), reconnect_min_s: 100ms, reconnect_max_s: 500ms}
        outbox: {path: \(directory)/\(id).sqlite}
        regions:
          - name: desk
            match: {format: ibeacon, uuid: \(uuid)}
            enter: {rssi_above: -70}

        """
    }

    /// Writes the capture and starts its replay at speed 2; the capture stalls after its end (the gateway keeps
    /// running until the test stops it).
    static func replay(
        _ id: String, _ observations: [Observation], directory: String, port: Int
    ) throws -> DaemonProcess {
        let capture = directory + "/\(id).btsnoop"
        let sorted = observations.sorted { $0.timestamp < $1.timestamp }
        try Data(SyntheticCapture(sorted).bytes).write(to: URL(fileURLWithPath: capture))
        try RoomsSite.stall(capture: capture, after: sorted.last?.timestamp ?? start)
        let path = directory + "/\(id).yaml"
        try config(id, directory: directory, port: port).write(toFile: path, atomically: true, encoding: .utf8)
        return try DaemonProcess(arguments: [
            "replay", capture, "--config", path, "--speed", "2", "--max-gap", "3600", "--state-db",
            directory + "/\(id).sqlite",
        ])
    }

    @Test func aTeachSetsTheLevelsIsKeptSharedAndForgotten() async throws {
        let site = try await BrokerSite(prefix: "bb-teach")
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)
        let port = broker.port
        let total = Self.boundarySeconds + Self.insideSeconds

        // gw-a hears the tag at -80 (the boundary), then -74; and another beacon inside all along. gw-b hears
        // the tag at -88.
        var a = Self.tag(-80, from: 0, seconds: Self.boundarySeconds)
        a += Self.tag(-74, from: Self.boundarySeconds, seconds: Self.insideSeconds)
        a += Self.tag(-60, from: 0, seconds: total, minor: 8)
        let gatewayA = try Self.replay("gw-a", a, directory: directory, port: port)
        let gatewayB = try Self.replay("gw-b", Self.tag(-88, from: 0, seconds: total), directory: directory, port: port)
        defer {
            gatewayA.signal(SIGKILL)
            gatewayB.signal(SIGKILL)
        }
        for id in ["gw-a", "gw-b"] {
            try await waitUntil("\(id) replays the tag", timeout: 60) {
                subscriber.messages.contains { $0.topic == "beaconbridge/\(id)/sighting/\(Self.tag)" }
            }
        }

        // Teach the boundary through the CLI: both gateways record 10 s of capture.
        let teach = try await BuiltBinary.run([
            "regions", "teach", "--region", "desk", "--device", Self.tag, "--at", "boundary", "--seconds", "10",
            "--config", directory + "/gw-a.yaml",
        ])
        print("regions teach:\n\(teach.stdout)\(teach.stderr)")
        #expect(teach.status == 0, "stdout: \(teach.stdout) stderr: \(teach.stderr)")
        #expect(teach.stdout.contains("gw-a: recording desk at boundary of \(Self.tag) for 10 s"))
        #expect(teach.stdout.contains("gw-a: done: level -80 dBm"), "\(teach.stdout)")
        #expect(teach.stdout.contains("gw-b: done: level -88 dBm"), "\(teach.stdout)")
        #expect(teach.stdout.contains(Self.taught(-80).cli + "; stored"), "\(teach.stdout)")
        #expect(teach.stdout.contains("s left"), "progress: \(teach.stdout)")

        // Retained, one record per gateway; each gateway has the other's.
        let topicA = "beaconbridge/regions/taught/gw-a/desk/\(Self.tag)"
        try await waitUntil("gw-a's record is retained", timeout: 10) {
            subscriber.messages.contains { $0.topic == topicA && !$0.payload.isEmpty }
        }
        let record = try #require(subscriber.messages.last { $0.topic == topicA }?.json)
        #expect(Self.number(record["levels"]?["boundary"]?["level"]) == -80)
        let reports = Self.number(record["levels"]?["boundary"]?["reports"]) ?? 0
        #expect(reports >= 45 && reports <= 51, "10 s at 5 Hz: \(reports)")
        try await waitUntil("gw-b receives gw-a's record", timeout: 10) {
            Self.logged(gatewayB.stderr, "taught record received", "gateway=gw-a")
        }
        #expect(gatewayA.stderr.contains("desk/\(Self.tag)" + Self.taught(-80).log), "\(gatewayA.stderr)")

        // Bad input: an unknown region (refused by the CLI, and by each gateway over MQTT), a device never heard
        // (nothing stored), retained records that are malformed or of another site (refused, nothing stored).
        let unknown = try await BuiltBinary.run([
            "regions", "teach", "--region", "attic", "--device", Self.tag, "--at", "inside", "--config",
            directory + "/gw-a.yaml",
        ])
        #expect(unknown.status == 65 && unknown.stderr.contains("`attic` is not a region"), "\(unknown.stderr)")
        subscriber.publish(
            topic: "beaconbridge/regions/command/teach",
            payload: #"{"id":"x1","region":"attic","device":"d","at":"inside"}"#)
        try await waitUntil("both gateways refuse the unknown region", timeout: 10) {
            ["gw-a", "gw-b"].allSatisfy { id in
                subscriber.messages.contains {
                    $0.topic == "beaconbridge/\(id)/reply/regions/teach" && $0.json?["id"] == .string("x1")
                        && $0.json?["error"]?["kind"] == .string("unknown_region")
                }
            }
        }
        let silent = "ibeacon:\(Self.uuid):9:9"
        let unheard = try await BuiltBinary.run([
            "regions", "teach", "--region", "desk", "--device", silent, "--at", "boundary", "--seconds", "3",
            "--config", directory + "/gw-a.yaml",
        ])
        print("regions teach (never heard):\n\(unheard.stdout)\(unheard.stderr)")
        #expect(unheard.status == 65, "stdout: \(unheard.stdout) stderr: \(unheard.stderr)")
        #expect(unheard.stdout.contains("gw-a: done: the device was not heard"), "\(unheard.stdout)")
        #expect(unheard.stdout.contains("needs: boundary: not taught (no report heard)"), "\(unheard.stdout)")
        subscriber.publish(topic: "beaconbridge/regions/taught/gw-x/desk/dev", payload: "{not json", retain: true)
        let foreign =
            #"{"kind":"taught","site":"elsewhere","gateway":"gw-x","region":"desk","device":"dev","recorded":1,"levels":{"boundary":{"level":-60,"spread":1,"reports":30,"seconds":30}}}"#
        subscriber.publish(topic: "beaconbridge/regions/taught/gw-y/desk/dev", payload: foreign, retain: true)
        try await waitUntil("both records refused", timeout: 10) {
            gatewayA.stderr.components(separatedBy: #"msg="taught record refused""#).count >= 3
        }
        #expect(gatewayA.stderr.contains("taught on site `elsewhere`"), "\(gatewayA.stderr)")

        // The thresholds it set: at -74 the tag enters desk at gw-a (the configured -70 never would); the other
        // beacon's enter is delivered as before.
        let enterTopic = "beaconbridge/gw-a/region/desk/\(Self.tag)"
        try await waitUntil("the tag enters desk at gw-a", timeout: 120) {
            subscriber.messages.contains { $0.topic == enterTopic && $0.json?["event"] == .string("enter") }
        }
        let enter = try #require(
            subscriber.messages.first { $0.topic == enterTopic && $0.json?["event"] == .string("enter") })
        let enteredAt = try #require(Self.number(enter.json?["time"]))
        #expect(enteredAt >= Self.start + Self.boundarySeconds, "entered at \(enteredAt - Self.start) s")
        #expect(subscriber.messages.contains { $0.topic == "beaconbridge/gw-a/region/desk/\(Self.other)" })

        // A restart keeps it: gw-a again, the tag away (-90: out, by either level) then back at -74; the stored
        // link decides that it enters.
        gatewayA.signal(SIGTERM)
        #expect(await gatewayA.waitForExit(timeout: 30) == 0, "\(gatewayA.stderr)")
        let check = try await BuiltBinary.run(["check-config", "--config", directory + "/gw-a.yaml"])
        print("check-config:\n\(check.stdout)")
        #expect(check.stdout.contains("desk: taught for \(Self.tag) on gw-a, \(Self.tag) on gw-b"), "\(check.stdout)")
        #expect(!check.stdout.contains("gw-x") && !check.stdout.contains("gw-y"))
        let back = total + 70
        let restarted = try Self.replay(
            "gw-a", Self.tag(-90, from: total + 10, seconds: 60) + Self.tag(-74, from: back, seconds: 60),
            directory: directory, port: port)
        defer { restarted.signal(SIGKILL) }
        try await waitUntil("gw-a applies the stored link", timeout: 60) {
            Self.logged(restarted.stderr, "taught levels applied", "reason=stored")
        }
        try await waitUntil("the tag enters desk again after the restart", timeout: 120) {
            subscriber.messages.contains {
                $0.topic == enterTopic && $0.json?["event"] == .string("enter")
                    && (Self.number($0.json?["time"]) ?? 0)
                        >= Self.start + back
            }
        }

        // Status shows it.
        let status = try await BuiltBinary.run([
            "devices", "status", "--config", directory + "/gw-b.yaml", "--wait", "5",
        ])
        print("devices status:\n\(status.stdout)")
        #expect(status.stdout.contains("taught:"), "\(status.stdout)")
        let row = status.stdout.split(separator: "\n").first { $0.hasPrefix("desk ") && $0.contains("gw-a") }
        #expect(row?.contains("-80±1.5") == true && row?.contains(Self.taught(-80).table) == true, "\(status.stdout)")
        let rooms = try await BuiltBinary.run(["rooms", "status", "--config", directory + "/gw-b.yaml", "--wait", "5"])
        #expect(rooms.status == 0 && rooms.stdout.contains(Self.taught(-88).table), "\(rooms.stdout)\(rooms.stderr)")

        // Forget: both gateways drop it, the retained records are cleared, and gw-a's database row is gone.
        let forget = try await BuiltBinary.run([
            "regions", "forget", "--region", "desk", "--device", Self.tag, "--config", directory + "/gw-a.yaml",
        ])
        print("regions forget:\n\(forget.stdout)\(forget.stderr)")
        #expect(forget.status == 0, "stdout: \(forget.stdout) stderr: \(forget.stderr)")
        #expect(forget.stdout.contains("gw-a: forgotten (2 record(s))"), "\(forget.stdout)")
        try await waitUntil("the retained record is cleared", timeout: 10) {
            subscriber.messages.last { $0.topic == topicA }?.payload == ""
        }
        restarted.signal(SIGTERM)
        #expect(await restarted.waitForExit(timeout: 30) == 0)
        let after = try await BuiltBinary.run(["check-config", "--config", directory + "/gw-a.yaml"])
        #expect(after.stdout.contains("desk: configured levels (taught for no device)"), "\(after.stdout)")
    }

    /// `replay --teach`: the window is the capture's, so the same capture teaches the same at any speed, and the
    /// result applies before the rest of the capture is scored (the tag then enters at -74 dBm).
    @Test func aReplayTeachesFromItsCaptureAtAnySpeed() async throws {
        let site = try await BrokerSite(prefix: "bb-teach-replay")
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)
        let capture = directory + "/tag.btsnoop"
        let observations = Self.tag(-80, from: 0, seconds: 30) + Self.tag(-74, from: 30, seconds: 40)
        try Data(SyntheticCapture(observations).bytes).write(to: URL(fileURLWithPath: capture))

        var entered: [String: Double] = [:]
        for (id, speed) in [("gw-r0", "0"), ("gw-r4", "4")] {
            let path = directory + "/\(id).yaml"
            try Self.config(id, directory: directory, port: broker.port).write(
                toFile: path, atomically: true, encoding: .utf8)
            let run = try await BuiltBinary.run([
                "replay", capture, "--config", path, "--speed", speed, "--state-db", directory + "/\(id).sqlite",
                "--teach", "desk:\(Self.tag):boundary:5-15",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(Self.logged(run.stderr, "teach stored", "level=-80.0"), "\(run.stderr)")
            let topic = "beaconbridge/\(id)/region/desk/\(Self.tag)"
            try await waitUntil("\(id): the tag enters desk", timeout: 20) {
                subscriber.messages.contains { $0.topic == topic && $0.json?["event"] == .string("enter") }
            }
            let enter = subscriber.messages.first { $0.topic == topic && $0.json?["event"] == .string("enter") }
            entered[id] = Self.number(enter?.json?["time"])
        }
        let atFullSpeed = try #require(entered["gw-r0"])
        #expect(atFullSpeed >= Self.start + 30, "entered at \(atFullSpeed - Self.start) s, before the tag moved")
        #expect(entered["gw-r4"] == atFullSpeed, "\(entered)")

        // Wrong windows are usage errors, naming the problem.
        let config = directory + "/gw-r0.yaml"
        for (teach, message) in [
            ("desk:\(Self.tag):sofa:0-10", "AT must be boundary, inside or 1m"),
            ("attic:\(Self.tag):boundary:0-10", "`attic` is not a configured region"),
            ("desk:\(Self.tag):boundary:10-5", "START < END"),
        ] {
            let run = try await BuiltBinary.run(["replay", capture, "--config", config, "--teach", teach])
            #expect(run.status == 64 && run.stderr.contains(message), "\(teach): \(run.status) \(run.stderr)")
        }
    }
}
