import TestSupport
import Testing

@testable import BeaconConfigReading
@testable import BeaconRooms
@testable import BeaconSimulation

/// The multi-gateway simulation: floor plan geometry, scenario files, and the rules compared on one stream.
@Suite(.ownThread) struct RoomSimulationTests {
    @Test func wallsAttenuateLinesThatCrossThemAndDoorwaysDoNot() {
        let plan = FloorPlan(
            rooms: [
                FloorPlan.Room(name: "a", minX: 0, minY: 0, maxX: 5, maxY: 4),
                FloorPlan.Room(name: "b", minX: 5, minY: 0, maxX: 10, maxY: 4),
            ],
            walls: [
                FloorPlan.Wall(x1: 5, y1: 0, x2: 5, y2: 1.5, attenuation: 6.9),
                FloorPlan.Wall(x1: 5, y1: 2.5, x2: 5, y2: 4, attenuation: 6.9),
            ],
            gateways: [])
        #expect(plan.wallLoss(fromX: 1, y: 1, toX: 9, y: 1) == 6.9)
        #expect(plan.wallLoss(fromX: 1, y: 2, toX: 9, y: 2) == 0)  // through the doorway
        #expect(plan.wallLoss(fromX: 1, y: 1, toX: 4, y: 3) == 0)  // same room
        #expect(plan.room(x: 4.9, y: 2) == "a")
        #expect(plan.room(x: 5.1, y: 2) == "b")
        #expect(plan.room(x: 11, y: 2) == nil)
    }

    static let twoRooms = """
        {"kind": "rooms", "name": "two-rooms", "seed": 3, "duration_s": 1800, "radio": {"model": "pessimistic"},
         "rooms": [{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}],
         "walls": [{"from": [5, 0], "to": [5, 1.5], "attenuation_db": 6.9}, {"from": [5, 2.5], "to": [5, 4], "attenuation_db": 6.9}],
         "gateways": [{"id": "gw-a", "x": 1, "y": 2, "receiver_offset_db": 3}, {"id": "gw-b", "x": 9, "y": 2}],
         "people": [{"id": "still", "rate_hz": 2, "path": [{"t": 0, "x": 2, "y": 1}]},
                    {"id": "mover", "rate_hz": 5, "path": [{"t": 0, "x": 2, "y": 3}, {"t": 600, "x": 2, "y": 3},
                     {"t": 604, "x": 5.5, "y": 2}, {"t": 607, "x": 8, "y": 3}, {"t": 1200, "x": 8, "y": 3},
                     {"t": 1203, "x": 5.5, "y": 2}, {"t": 1207, "x": 2, "y": 3}]}]}
        """

    @Test func aScenarioFileParsesWithGatewayRoomsFromThePlan() throws {
        let scenario = try RoomScenario(json: Self.twoRooms)
        #expect(RoomScenario.isRoomScenario(json: Self.twoRooms))
        #expect(scenario.plan.gateways.map(\.room) == ["a", "b"])
        #expect(scenario.arbiter.gatewayRooms == ["gw-a": "a", "gw-b": "b"])
        #expect(scenario.arbiter.receiverOffsets["gw-a"] == 3)
        #expect(scenario.people.count == 2)
    }

    /// The `arbiter` block goes through the YAML `rooms:` decoder: its durations, its defaults, its messages.
    @Test func theArbiterBlockIsReadLikeTheYAMLRoomsSection() throws {
        let text = Self.twoRooms.replacingOccurrences(
            of: #"]}]}"#,
            with: #"]}], "arbiter": {"dwell_s": "6s", "restore_max_age_s": "2m", "receiver_offsets_db": {"gw-b": -2}}}"#
        )
        let scenario = try RoomScenario(json: text)
        #expect(scenario.arbiter.dwell == 6)
        #expect(scenario.arbiter.restoreMaxAge == 120)
        #expect(scenario.arbiter.receiverOffsets == ["gw-b": -2])
        #expect(scenario.arbiter.margin == RoomArbiterSettings().margin)
        // The same keys as a YAML `rooms:` section (plain scalars, as the YAML parser makes them).
        let section = ConfigNode.mapping([
            ConfigEntry(key: "dwell_s", value: .scalar("6s")),
            ConfigEntry(key: "restore_max_age_s", value: .scalar("2m")),
        ])
        var reader = ConfigReader(section, path: ConfigPath(parsing: "rooms"))
        let fromYAML = RoomSettings(from: &reader).arbiter
        #expect(fromYAML.dwell == scenario.arbiter.dwell && fromYAML.restoreMaxAge == scenario.arbiter.restoreMaxAge)
    }

    @Test(arguments: [
        (
            #"{"kind": "rooms", "duration_s": 60, "rooms": [{"name": "a", "x": [0, 1], "y": [0, 1]}], "gateways": [{"id": "g", "room": "z"}], "people": [{"path": [{"t": 0}]}]}"#,
            "gateways[0].room"
        ),
        (
            #"{"kind": "rooms", "duration_s": 60, "rooms": [{"name": "a", "x": [0, 1], "y": [0, 1]}], "gateways": [{"id": "g", "x": 0.5, "y": 0.5}], "people": [{"path": [{"t": 0}]}], "arbiter": {"margin_db": -3}}"#,
            "arbiter.margin_db"
        ),
        (
            #"{"kind": "rooms", "duration_s": 60, "rooms": [{"name": "a", "x": [0, 1], "y": [0, 1]}], "gateways": [{"id": "g", "x": 0.5, "y": 0.5}], "people": [{"path": [{"t": 0}]}], "arbiter": {"receiver_offsets_db": {"gw-z": 1}}}"#,
            "arbiter.receiver_offsets_db.gw-z"
        ),
        (
            #"{"kind": "rooms", "duration_s": 60, "rooms": [{"name": "a", "x": [0, 1], "y": [0, 1]}], "gateways": [{"id": "g", "x": 0.5, "y": 0.5}], "people": [{"path": [{"t": 0}]}], "arbiter": {"dwel_s": 4}}"#,
            "arbiter.dwel_s"
        ),
        (
            #"{"kind": "rooms", "duration_s": 60, "rooms": [{"name": "a", "x": [0, 1], "y": [0]}], "gateways": [], "people": []}"#,
            "rooms[0].y"
        ),
        (
            #"{"kind": "rooms", "duration_s": 60, "rooms": [{"name": "a", "x": [0, 1], "y": [0, 1]}], "gateways": [{"id": "g", "x": 0.5, "y": 0.5}], "people": [{"path": [{"t": 0}]}], "walls": [{"from": [0, 0], "to": [1, 1], "thickness": 2}]}"#,
            "walls[0].thickness"
        ),
    ])
    func problemsNameTheirKeyPath(text: String, path: String) {
        #expect(throws: ScenarioError.self) { try RoomScenario(json: text) }
        do { _ = try RoomScenario(json: text) } catch { #expect(error.path == path) }
    }

    @Test func theSimulationIsDeterministicAndEveryGatewayHearsThroughItsOwnLink() throws {
        let scenario = try RoomScenario(json: Self.twoRooms)
        let first = RoomScenarioRun(scenario).sightings()
        let again = RoomScenarioRun(scenario).sightings()
        #expect(first == again)
        let simulator = RoomSimulator(scenario)
        let nearA = simulator.observations(gateway: 0).filter { $0.beaconID == "still" }.compactMap(\.rssi)
        let nearB = simulator.observations(gateway: 1).filter { $0.beaconID == "still" }.compactMap(\.rssi)
        #expect(!nearA.isEmpty && !nearB.isEmpty)
        // "still" stands 1.4 m from gw-a (which reads 3 dB hot) and 7 m plus a wall from gw-b.
        let meanA = Double(nearA.reduce(0, +)) / Double(nearA.count)
        let meanB = Double(nearB.reduce(0, +)) / Double(nearB.count)
        #expect(meanA - meanB > 15)
    }

    @Test func theArbiterFollowsTheTruthAndFlapsLessThanTheNearestRule() throws {
        let summary = RoomScenarioRun(try RoomScenario(json: Self.twoRooms)).run()
        let rules = Dictionary(uniqueKeysWithValues: summary.rules.map { ($0.name, $0) })
        let arbiter = try #require(rules["beaconbridge"])
        let nearest = try #require(rules["nearest"])
        #expect(try #require(rules["distance-margin"]).judgedSeconds == arbiter.judgedSeconds)
        #expect(arbiter.trueChanges == 2)
        #expect(arbiter.missed == 0)
        #expect(arbiter.wrongShare < 0.05)
        #expect(arbiter.falseSwitches <= nearest.falseSwitches)
        #expect(nearest.falseSwitches > 0)
    }

    @Test func wrongTimeIsSplitIntoCatchingUpAndRelapse() throws {
        let scenario = try RoomScenario(json: Self.twoRooms)
        var score = RoomScore(scenario: scenario, simulator: RoomSimulator(scenario))
        let still = scenario.people[0].beaconID
        // The mover crosses into b at 603.4 s and back into a at 1203.6 s. The rule shows b from 614 s (10 wrong
        // samples catching up), loses it for 900...919 s (20 s of relapse), and shows a again from 1209 s (5).
        for second in 1...1800 {
            let t = Double(second)
            score.sample(at: scenario.startTime + t, interval: 1) { id in
                if id == still { return .some("a") }
                return t >= 614 && t < 1209 && !(t >= 900 && t < 920) ? .some("b") : .some("a")
            }
        }
        let rule = score.finish(name: "test")
        #expect(rule.wrongSeconds == 35)
        #expect(rule.wrongTime.wrongCatchingUp == 15)
        #expect(rule.wrongTime.wrongRelapse == 20)
        #expect(rule.wrongTime.wrongInTransit == 0)
        #expect(rule.wrongTime.wrongAmbiguous == 0)
        #expect(rule.wrongTime.ambiguousSeconds == 0)
        var merged = rule.wrongTime
        merged.add(rule.wrongTime)
        #expect(merged.wrongRelapse == 40)
    }

    @Test func summariesMergeRuleByRule() {
        var a = RoomSummary.Rule(name: "x")
        a.judgedSeconds = 100
        a.wrongSeconds = 10
        a.latencies = [1]
        var b = RoomSummary.Rule(name: "x")
        b.judgedSeconds = 300
        b.wrongSeconds = 10
        b.latencies = [3, 5]
        let merged = RoomSummary.merged([RoomSummary(sightings: 1, rules: [a]), RoomSummary(sightings: 2, rules: [b])])
        #expect(merged.sightings == 3)
        #expect(merged.rules.count == 1)
        #expect(merged.rules[0].wrongShare == 0.05)
        #expect(merged.rules[0].latencyP50 == 3)
    }
}
