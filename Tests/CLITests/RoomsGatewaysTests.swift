import BeaconModel
import BeaconRooms
import Foundation
import TestSupport
import Testing

/// Issue 12's integration test: three real gateway processes (the built binary), each replaying its own capture
/// of one simulated world (`simulate --capture` on Tests/Fixtures/rooms/three-gateways.json: three rooms in a
/// row, one gateway each, a walker a -> b -> c -> b and a tag a -> c, the realistic radio) to one real mosquitto,
/// with `rooms.enabled`. The room events the leader publishes are checked against the simulator's ground truth;
/// the leader (gw-a, the lowest id) is killed (SIGKILL: the broker publishes its will) once the world is 170 s
/// in (after both people left its room), and gw-b must take over and continue every beacon's decisions.
///
/// Tolerance: every true stay of at least 30 s (after the 10 s warm-up) must be announced, in order, by a `room`
/// decision made no earlier than 5 s before it began and at most 45 s after (the arbiter's own latency on this
/// scenario in the simulator: p50/p95/max 8.9/26.9/75.9 s over seeds 7-14, 23.9 s max on seed 7, the one
/// captured here; the replays add a few seconds of capture-time skew between gateways); at most one extra
/// (false) decision per beacon; the last decision is the true room at the end.
@Suite(.serialized) struct RoomsGatewaysTests {
    static let scenario = BuiltBinary.packageRoot + "/Tests/Fixtures/rooms/three-gateways.json"
    static let gateways = ["gw-a": "a", "gw-b": "b", "gw-c": "c"]
    static let offsets = ["gw-a": 3, "gw-b": 0, "gw-c": -2]
    static let start: Double = 1_700_000_000

    struct Stay {
        var beacon: String
        var room: String
        var start: Double
        var end: Double
    }

    struct Decision {
        var beacon: String
        var room: String
        var decision: Int64
        var time: Double
        var leader: String
    }

    static func truth(_ stdout: String) -> [Stay] {
        stdout.split(separator: "\n").compactMap { line -> Stay? in
            guard let json = try? JSONValue(parsing: String(line)), json["type"] == .string("room_truth"),
                case let .string(beacon)? = json["beacon_id"], case let .string(room)? = json["room"],
                let start = number(json["start"]), let end = number(json["end"])
            else { return nil }
            return Stay(beacon: beacon, room: room, start: start, end: end)
        }
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case let .int(v)?: Double(v)
        case let .double(v)?: v
        default: nil
        }
    }

    @Test func threeGatewaysDecideRoomsThroughTheBrokerAndSurviveTheLeader() async throws {
        let directory = try TestDirectory.make(prefix: "bb-rooms")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }

        let truth = try await RoomsSite.simulate(Self.scenario, into: directory)
        try #require(Set(truth.map(\.beacon)).count == 2, "ground truth: \(truth)")

        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await subscriber.start()
        defer { Task { await subscriber.stop() } }

        // gw-a hears the world until 180 s, then nothing for an hour: it is killed while it waits, so it cannot
        // have replayed (and decided) past 180 s however far the test lags behind it. It used to replay the
        // whole world: on a machine loaded by the cross build's roots being created beside the suite, it had
        // finished (exit 0, no last will) before the test saw its 170 s sighting.
        try RoomsSite.stall(capture: directory + "/gw-a.btsnoop", after: Self.start + 180)
        let offsets = Self.offsets.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let processes = try RoomsSite.replay(
            gateways: Self.gateways, directory: directory, port: broker.port, speed: 4,
            rooms: ["receiver_offsets_db: {\(offsets.joined(separator: ", "))}", "replay_wait_for_gateways: 3"],
            arguments: ["gw-a": ["--max-gap", "3600"]])
        defer { for process in processes.values { process.signal(SIGKILL) } }
        let leader = try #require(processes["gw-a"])

        // Kill the leader once the world is 170 s in (both people have left room a by 165 s) by the leader's own
        // clock: under load the three replays drift apart by seconds, and a leader killed on a slower
        // gateway's clock could already have decided the walker's return to b (204 s), leaving gw-b nothing to
        // decide (seen once in a full suite run beside two other builds: gw-a decided at t+218, then was killed).
        // What the subscriber sees of gw-a lags what gw-a has processed (its delivery queue): at speed 8 that lag
        // reached 48 s of capture in a full suite run on a quiet machine (gw-a again decided at t+218 before the
        // kill), so the replays run at speed 4, gw-a's capture ends at 180 s (above), and gw-a is frozen
        // (SIGSTOP) the moment the sighting is seen.
        try await waitUntil("a sighting of gw-a 170 s into the world", timeout: 120) {
            subscriber.messages(under: "beaconbridge/gw-a/").contains { message in
                message.topic.contains("/sighting/") && (Self.number(message.json?["time"]) ?? 0) >= Self.start + 170
            }
        }
        leader.signal(SIGSTOP)
        let decisionsBeforeKill = subscriber.messages(under: "beaconbridge/rooms/").count
        leader.signal(SIGKILL)
        #expect(await leader.waitForExit(timeout: 60) == 128 + SIGKILL)
        for id in ["gw-b", "gw-c"] {
            let status = await processes[id]?.waitForExit(timeout: 150)
            #expect(status == 0, "\(id) stderr: \(processes[id]?.stderr ?? "")")
        }
        try await Task.sleep(for: .milliseconds(500))

        let all = subscriber.messages
        #expect(
            all.contains { $0.topic == "beaconbridge/gw-a/availability" && $0.payload == "offline" },
            "gw-a's last will")
        // A replay that ends publishes `offline`: if gw-c (room c's only gateway) ends before gw-b, gw-b rightly
        // turns the beacons of room c `unknown` (a dark room, docs/rooms.md) in the last seconds of the world. That
        // is the end of the test bed, not a decision about the world: it is left out (seen once under a loaded
        // full suite: `unknown` at t+299 by gw-b).
        let worldEnd = truth.map(\.end).max() ?? .infinity
        let decisions: [Decision] = all.compactMap { message -> Decision? in
            guard message.topic.hasPrefix("beaconbridge/rooms/"), let json = message.json,
                json["event"] == .string("room"),
                case let .string(beacon)? = json["beacon_id"], case let .string(room)? = json["room"],
                case let .int(number)? = json["decision"], let time = Self.number(json["time"]),
                case let .string(leader)? = json["gateway"]
            else { return nil }
            if room == RoomArbiter.unknownRoom, time >= worldEnd - 5 { return nil }
            return Decision(beacon: beacon, room: room, decision: number, time: time, leader: leader)
        }
        let log = decisions.map {
            "\($0.beacon.suffix(3)) #\($0.decision) \($0.room) t+\(Int($0.time - Self.start)) by \($0.leader)"
        }
        .joined(separator: "\n")
        print("rooms decisions (beacon, number, room, capture time, leader):\n\(log)")
        #expect(decisionsBeforeKill > 0, "gw-a published decisions before it was killed")

        for beacon in Set(truth.map(\.beacon)).sorted() {
            let mine = decisions.filter { $0.beacon == beacon }
            // The sequence of decisions continues across leaders: 1, 2, 3, ... in the order delivered.
            #expect(
                mine.map(\.decision) == (0..<mine.count).map { Int64($0 + 1) },
                "decision numbers of \(beacon):\n\(log)")
            // Every true stay of at least 30 s after the warm-up is announced, in order, within the tolerance.
            let stays = truth.filter { $0.beacon == beacon && $0.end - $0.start >= 30 }
            let matched = RoomsSite.announced(
                stays, by: mine.map { (room: $0.room, time: $0.time) }, start: Self.start, log: log)
            #expect(matched == stays.count)
            // At most one false decision (at rest). The takeover costs none: a silent gateway adopts every
            // decision the leader announces (RoomArbiter.adopt), so the new leader neither announces its own older
            // view of a move gw-a had just announced nor undoes it (session 5 saw that once under load: c by gw-a
            // at t+167, b by gw-b at t+171 after the kill, c again at t+193; RoomTakeoverTests).
            #expect(mine.count - matched <= 1, "at most one false decision for \(beacon):\n\(log)")
            #expect(
                mine.last?.room == stays.last?.room,
                "the last decision of \(beacon) is its true room at the end:\n\(log)")
        }
        // gw-a led until it was killed; gw-b continued (the walker's return to b, 204 s into the world, is its).
        #expect(decisions.first?.leader == "gw-a", "\(log)")
        #expect(
            decisions.contains { $0.leader == "gw-b" && $0.time >= Self.start + 170 },
            "gw-b decided after the kill:\n\(log)")
        #expect(!decisions.contains { $0.leader == "gw-a" && $0.time > Self.start + 185 }, "\(log)")
        // Every room event validates against its schema, and enter/exit accompany the states.
        // (`beaconbridge/rooms/calibration` is the self-calibration's, published only once gateways pair: none here.)
        let roomMessages = all.filter { $0.topic.hasPrefix("beaconbridge/rooms/") }
        #expect(!roomMessages.contains { $0.topic == "beaconbridge/rooms/calibration" })
        #expect(roomMessages.allSatisfy { $0.json?["kind"] == .string("room") })
        #expect(
            roomMessages.contains { $0.json?["event"] == .string("enter") }
                && roomMessages.contains { $0.json?["event"] == .string("exit") })
        // The arbiter's counters in gw-b's telemetry: it decided (silently, then leading) on peer sightings.
        let counters = all.last { $0.topic == "beaconbridge/gw-b/telemetry" }?.json?["counters"]
        #expect(
            (Self.number(counters?["rooms_decisions"]) ?? 0) >= 2, "gw-b telemetry: \(String(describing: counters))")
        #expect((Self.number(counters?["rooms_peer_sightings"]) ?? 0) > 0)
        #expect(Self.number(counters?["rooms_beacons_tracked"]) == 2)
        #expect(Self.number(counters?["rooms_bad_inbound"]) == 0)
        // Nothing was published by gw-c (never the lowest online id while gw-b ran).
        #expect(!decisions.contains { $0.leader == "gw-c" && $0.time < Self.start + 290 }, "\(log)")
    }

    @Test func aRoomsCaptureNeedsOneFilePerGateway() async throws {
        let directory = try TestDirectory.make(prefix: "bb-rooms")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await BuiltBinary.run([
            "simulate", "--scenario", Self.scenario, "--capture", directory + "/one.btsnoop",
        ])
        #expect(result.status == 64)
        #expect(result.stderr.contains("{gateway}"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/one.btsnoop"))
    }
}
