import BeaconEvents
import BeaconModel
import Foundation
import SiteConfig
import TestSupport
import Testing

/// A zoned site seen from outside (issue 46; docs/rooms.md "Large sites"), over real gateway processes (the built
/// binary replaying synthetic captures) and a real mosquitto: site gw-a (room a), gw-b (b), gw-c (c), gw-d (d),
/// of which gw-a and gw-c run, first in zones east = gw-a, gw-b and west = gw-c, gw-d. Shows, in order:
/// - Home Assistant: each zone's leader announces its zone's room entities only, on its zone's topics (node
///   `beaconbridge_rooms_<zone>`, state on `beaconbridge/zones/<zone>/rooms/<beacon>`, available with the zone's
///   gateways, a fingerprint sensor and train button per room of the zone, the button aimed at that leader);
/// - `rooms status` names each gateway's zone and each zone's leader;
/// - a reload (SIGHUP) of files that move gw-a to west is not applied to the zones (the subscriptions are made at
///   start): the warning names `rooms.zones` with the running and the configured zone, gw-a's arbiter keeps
///   east's two gateways (not west's three), and gw-a keeps deciding for east (a tag it first hears after the
///   reload is announced under east, by gw-a);
/// - after a restart of gw-a and gw-c on those files, gw-a leads west (its announcements and `rooms status`).
@Suite(.serialized) struct RoomZonesDaemonTests {
    static let gateways = ["gw-a": "a", "gw-b": "b", "gw-c": "c", "gw-d": "d"]
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    /// Heard by gw-a and gw-c from the start; `late` by gw-a only, from `lateFrom` s into the capture.
    static let tag = "ibeacon:\(uuid):1:1"
    static let late = "ibeacon:\(uuid):1:2"
    static let start: Double = 1_700_000_000
    static let seconds = 400
    static let lateFrom = 120
    static let before = [
        "zones:", "  - {name: east, gateways: [gw-a, gw-b], rooms: [a, b]}",
        "  - {name: west, gateways: [gw-c, gw-d], rooms: [c, d]}",
    ]
    static let after = [
        "zones:", "  - {name: east, gateways: [gw-b], rooms: [b]}",
        "  - {name: west, gateways: [gw-a, gw-c, gw-d], rooms: [a, c, d]}",
    ]

    static func observations(receiver: String) -> [Observation] {
        var out: [Observation] = []
        for second in 0..<seconds {
            let time = start + Double(second) + 0.2
            func heard(_ minor: String, rssi: Int) -> Observation {
                Observation(
                    timestamp: time, beaconID: "", format: "ibeacon", identifiers: [uuid, "1", minor],
                    address: BluetoothAddress(rawValue: 0xC0_0000_0000 | (UInt64(minor) ?? 0)),
                    rssi: rssi + (second % 2 == 0 ? 1 : -1), measuredPower: -59)
            }
            out.append(heard("1", rssi: receiver == "gw-a" ? -55 : -65))
            if receiver == "gw-a", second >= lateFrom { out.append(heard("2", rssi: -58)) }
        }
        return out
    }

    /// A gateway's file: rooms with `zones`, Home Assistant discovery on, both tags named, training buttons for
    /// `tag`.
    static func write(_ id: String, zones: [String], directory: String, port: Int) throws {
        let text =
            RoomsSite.config(
                id, gateways: gateways, directory: directory, port: port,
                rooms: zones + ["training: {device: \(tag)}", "calibration: {enabled: false}"])
            + "topics: {home_assistant: {enabled: true}}\n"
            + "beacons:\n  - {id: \(tag), name: Tag}\n  - {id: \(late), name: Late}\n"
        try text.write(toFile: directory + "/\(id).yaml", atomically: true, encoding: .utf8)
    }

    static func launch(_ id: String, directory: String) throws -> DaemonProcess {
        try DaemonProcess(arguments: [
            "replay", directory + "/\(id).btsnoop", "--config", directory + "/\(id).yaml", "--speed", "2",
        ])
    }

    /// The newest discovery config on `topic` after the first `after` messages.
    static func config(_ subscriber: TestSubscriber, _ topic: String, after: Int = 0) -> JSONValue? {
        subscriber.messages.dropFirst(after).last { $0.topic == topic }?.json
    }

    /// A zone's Home Assistant config topic.
    static func discovery(_ component: String, _ zone: String, _ object: String) -> String {
        "homeassistant/\(component)/beaconbridge_rooms_\(zone)/\(object)/config"
    }

    static func availability(_ config: JSONValue?) -> [String] {
        guard case let .array(entries)? = config?["availability"] else { return [] }
        return entries.compactMap { if case let .string(topic)? = $0["topic"] { topic } else { nil } }
    }

    static func roomsStatus(_ directory: String, file: String = "gw-b.yaml") async throws -> String {
        let status = try await BuiltBinary.run(["rooms", "status", "--config", directory + "/" + file, "--wait", "5"])
        #expect(status.status == 0, "\(status.stderr)")
        return status.stdout
    }

    @Test func eachZoneAnnouncesItsOwnRoomsAndAZoneMoveWaitsForARestart() async throws {
        let site = try await BrokerSite(prefix: "bb-zoned", patterns: ["beaconbridge/#", "homeassistant/#"])
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)

        try RoomsSite.writeCaptures(gateways: ["gw-a", "gw-c"], directory: directory) {
            Self.observations(receiver: $0)
        }
        for id in Self.gateways.keys { try Self.write(id, zones: Self.before, directory: directory, port: broker.port) }
        var processes: [String: DaemonProcess] = [:]
        for id in ["gw-a", "gw-c"] { processes[id] = try Self.launch(id, directory: directory) }
        defer { for process in processes.values { process.signal(SIGKILL) } }

        // Home Assistant: each zone's leader announces its own zone's entities.
        let slug = TopicLayout.slug(Self.tag)
        try await waitUntil("both zones decided the tag and announced their rooms", timeout: 45) {
            [("east", "b"), ("west", "d")].allSatisfy { zone, last in
                subscriber.messages.contains { $0.topic == "beaconbridge/zones/\(zone)/rooms/\(Self.tag)" }
                    && Self.config(subscriber, Self.discovery("sensor", zone, slug + "_room")) != nil
                    && Self.config(subscriber, Self.discovery("button", zone, "train_" + last)) != nil
            }
        }
        let eastRoom = Self.config(subscriber, Self.discovery("sensor", "east", slug + "_room"))
        #expect(eastRoom?["state_topic"] == .string("beaconbridge/zones/east/rooms/\(Self.tag)"))
        #expect(eastRoom?["name"] == .string("Room (east)"))
        #expect(
            Self.availability(eastRoom) == ["beaconbridge/gw-a/availability", "beaconbridge/gw-b/availability"])
        let westTracker = Self.config(subscriber, Self.discovery("device_tracker", "west", slug + "_room_tracker"))
        #expect(westTracker?["state_topic"] == .string("beaconbridge/zones/west/rooms/\(Self.tag)"))
        #expect(
            Self.availability(westTracker) == ["beaconbridge/gw-c/availability", "beaconbridge/gw-d/availability"])
        let announced = Set(subscriber.messages.map(\.topic).filter { $0.hasPrefix("homeassistant/") })
        for (zone, rooms, leader) in [("east", ["a", "b"], "gw-a"), ("west", ["c", "d"], "gw-c")] {
            let fingerprints = announced.filter {
                $0.hasPrefix("homeassistant/sensor/beaconbridge_rooms_\(zone)/fingerprint_")
            }
            #expect(fingerprints == Set(rooms.map { Self.discovery("sensor", zone, "fingerprint_" + $0) }), "\(zone)")
            let buttons = announced.filter { $0.hasPrefix("homeassistant/button/beaconbridge_rooms_\(zone)/") }
            #expect(buttons == Set(rooms.map { Self.discovery("button", zone, "train_" + $0) }), "\(zone)")
            for button in buttons {
                #expect(
                    Self.config(subscriber, button)?["command_topic"]
                        == .string("beaconbridge/\(leader)/command/rooms/train"), "\(button)")
            }
        }
        #expect(!announced.contains { $0.contains("/beaconbridge_rooms/") }, "no site-wide room entity in a zoned site")
        #expect(!subscriber.messages.contains { $0.topic.hasPrefix("beaconbridge/rooms/") }, "no site-wide decision")

        // `rooms status`: each gateway's zone, each zone's leader.
        let status = try await Self.roomsStatus(directory)
        print("rooms status (gw-b's file, zones east and west):\n\(status)")
        #expect(status.contains("zone east: leader gw-a (the lowest online id of gw-a, gw-b)"), "\(status)")
        #expect(status.contains("zone west: leader gw-c (the lowest online id of gw-c, gw-d)"), "\(status)")
        let gwB = status.split(separator: "\n").first { $0.hasPrefix("gw-b ") }.map { $0.split(separator: " ") }
        #expect(gwB?.prefix(4) == ["gw-b", "b", "east", "?"], "\(status)")

        // The files move gw-a to west; SIGHUP to both running gateways.
        for id in Self.gateways.keys { try Self.write(id, zones: Self.after, directory: directory, port: broker.port) }
        let mark = subscriber.messages.count
        for id in ["gw-a", "gw-c"] { processes[id]?.signal(SIGHUP) }
        let gwA = try #require(processes["gw-a"])
        try await waitUntil("gw-a reloaded", timeout: 30) { gwA.stderr.contains("rooms reloaded") }
        #expect(gwA.stderr.contains("sections=rooms.zones"), "\(gwA.stderr)")
        #expect(
            gwA.stderr.contains("this gateway's zone changed")
                && gwA.stderr.contains(#"running="east (gw-a,gw-b)""#)
                && gwA.stderr.contains(#"configured="west (gw-a,gw-c,gw-d)""#), "\(gwA.stderr)")
        #expect(logValue(gwA.stderr, message: "rooms reloaded", key: "gateways") == "2", "east's gw-a and gw-b")
        #expect(!gwA.stderr.contains("reload refused"), "\(gwA.stderr)")
        // The tag gw-a first hears after the reload is still east's, decided by gw-a; west decides nothing of it.
        let lateEast = "beaconbridge/zones/east/rooms/\(Self.late)"
        try await waitUntil("the late tag decided", timeout: 120) {
            subscriber.messages.dropFirst(mark).contains { $0.topic == lateEast }
        }
        let lateDecision = subscriber.messages.dropFirst(mark).first { $0.topic == lateEast }?.json
        #expect(lateDecision?["room"] == .string("a") && lateDecision?["gateway"] == .string("gw-a"))
        #expect(!subscriber.messages.contains { $0.topic.hasPrefix("beaconbridge/zones/west/rooms/\(Self.late)") })

        // A restart of both on the moved files: gw-a (the lowest id of west) leads west.
        let restart = subscriber.messages.count
        for id in ["gw-a", "gw-c"] {
            processes[id]?.signal(SIGTERM)
            #expect(await processes[id]?.waitForExit(timeout: 30) != nil, "\(id) stopped")
            processes[id] = try Self.launch(id, directory: directory)
        }
        let westButton = Self.discovery("button", "west", "train_a")
        try await waitUntil("gw-a announces west's rooms", timeout: 60) {
            Self.config(subscriber, westButton, after: restart)?["command_topic"]
                == .string("beaconbridge/gw-a/command/rooms/train")
        }
        let westRoom = Self.config(subscriber, Self.discovery("sensor", "west", slug + "_room"), after: restart)
        #expect(
            Self.availability(westRoom) == [
                "beaconbridge/gw-a/availability", "beaconbridge/gw-c/availability", "beaconbridge/gw-d/availability",
            ])
        let moved = try await Self.roomsStatus(directory)
        print("rooms status after the move and the restarts:\n\(moved)")
        #expect(moved.contains("zone west: leader gw-a (the lowest online id of gw-a, gw-c, gw-d)"), "\(moved)")
        #expect(moved.contains("zone east: no leader (none of gw-b is online)"), "\(moved)")
    }

    /// The same move by a site push (docs/site-config.md "A large site: zones"): the gateways run their files'
    /// zones; `site.yaml` moves gw-a to west. The push is applied and committed (status `applied`), gw-a logs the
    /// `rooms.zones` warning and keeps deciding for east, and `rooms status` on gw-a's file shows the committed
    /// site's zones (the file joined with the state file, as the daemon starts), not the file's own.
    @Test func aSitePushThatMovesAGatewayIsCommittedAndKeptForTheRestart() async throws {
        let site = try await BrokerSite(prefix: "bb-zoned-site")
        defer { site.stop() }
        let (directory, broker, subscriber) = (site.directory, site.broker, site.subscriber)

        try (SiteConfigGatewaysTests.keyText + "\n").write(
            toFile: directory + "/site.key", atomically: true, encoding: .utf8)
        try RoomsSite.writeCaptures(gateways: ["gw-a", "gw-c"], directory: directory) {
            Self.observations(receiver: $0)
        }
        for id in Self.gateways.keys {
            let local =
                RoomsSite.config(
                    id, gateways: Self.gateways, directory: directory, port: broker.port,
                    rooms: Self.before + ["calibration: {enabled: false}"])
                + "site: {id: house, key_file: \(directory)/site.key, apply_timeout_s: 24, max_bytes: 8192, "
                + "state_file: \(directory)/\(id)-site.json}\n"
            try local.write(toFile: directory + "/\(id).yaml", atomically: true, encoding: .utf8)
        }
        var processes: [String: DaemonProcess] = [:]
        for id in ["gw-a", "gw-c"] { processes[id] = try Self.launch(id, directory: directory) }
        defer { for process in processes.values { process.signal(SIGKILL) } }
        let gwA = try #require(processes["gw-a"])
        try await waitUntil("east decided by gw-a", timeout: 45) {
            subscriber.messages.contains { $0.topic == "beaconbridge/zones/east/rooms/\(Self.tag)" }
        }
        let before = try await Self.roomsStatus(directory, file: "gw-a.yaml")
        #expect(before.contains("zone east: leader gw-a (the lowest online id of gw-a, gw-b)"), "\(before)")

        // site.yaml: the same rooms with gw-a moved to west.
        let rooms = Self.gateways.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let shared =
            (["rooms:", "  enabled: true", "  gateways: {\(rooms)}", "  leader_settle_s: 0.5"]
            + (Self.after + ["calibration: {enabled: false}"]).map { "  " + $0 }).joined(separator: "\n") + "\n"
        try shared.write(toFile: directory + "/site.yaml", atomically: true, encoding: .utf8)
        let mark = subscriber.messages.count
        let push = try await BuiltBinary.run([
            "site", "push", directory + "/site.yaml", "--config", directory + "/gw-a.yaml",
        ])
        try #require(push.status == 0, "\(push.stdout)\(push.stderr)")
        try await waitUntil("version 1 applied by gw-a and gw-c", timeout: 60) {
            ["gw-a", "gw-c"].allSatisfy { id in
                subscriber.messages.contains {
                    $0.topic == "beaconbridge/house/site/status/\(id)"
                        && SiteStatus.parse(Array($0.payload.utf8)).map { $0.state == .applied && $0.version == 1 }
                            == true
                }
            }
        }
        #expect(
            gwA.stderr.contains("this gateway's zone changed") && gwA.stderr.contains(#"running="east (gw-a,gw-b)""#)
                && gwA.stderr.contains(#"configured="west (gw-a,gw-c,gw-d)""#), "\(gwA.stderr)")
        #expect(gwA.stderr.contains("site: configuration committed"), "\(gwA.stderr)")
        // Still east's until the restart: the late tag is decided under east by gw-a.
        let lateEast = "beaconbridge/zones/east/rooms/\(Self.late)"
        try await waitUntil("the late tag decided", timeout: 120) {
            subscriber.messages.dropFirst(mark).contains { $0.topic == lateEast }
        }
        #expect(
            subscriber.messages.dropFirst(mark).first { $0.topic == lateEast }?.json?["gateway"] == .string("gw-a"))
        #expect(!subscriber.messages.contains { $0.topic.hasPrefix("beaconbridge/zones/west/rooms/\(Self.late)") })
        // `rooms status` on gw-a's file: the committed site's zones, which gw-a starts on at its restart.
        let after = try await Self.roomsStatus(directory, file: "gw-a.yaml")
        print("rooms status (gw-a's file with the committed push):\n\(after)")
        #expect(after.contains("zone west: leader gw-a (the lowest online id of gw-a, gw-c, gw-d)"), "\(after)")
        #expect(after.contains("zone east: no leader (none of gw-b is online)"), "\(after)")
    }
}
