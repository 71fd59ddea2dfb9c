import TestSupport
import Testing

@testable import BeaconRooms
@testable import BeaconSimulation

/// Gateway outages in a rooms scenario (docs/rooms.md, "Gateway outages"): the file's `outages`, a gateway that
/// hears and sends nothing while it is down, BeaconBridge's rules told of it and the peers not, and the figures
/// that show the difference (confidently wrong, dark room shown elsewhere).
@Suite(.ownThread) struct RoomOutageTests {
    /// Two 5 × 4 m rooms side by side with no wall, gw-a at (1, 2) and gw-b at (9, 2), every random radio term
    /// off (`RoomOracleTests.quiet`), no spatial bias; a tag at rest in b at (7.5, 2) (1.5 m from gw-b, 6.5 m
    /// from gw-a), 15 minutes; `outages` spliced in.
    static func scenario(outages: String = "") throws(ScenarioError) -> RoomScenario {
        try RoomScenario(
            json: """
                {"kind": "rooms", "name": "outage", "seed": 4, "duration_s": 900, "radio": \(RoomOracleTests.quiet),
                 "rooms": [{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}],
                 "gateways": [{"id": "gw-a", "x": 1, "y": 2}, {"id": "gw-b", "x": 9, "y": 2}],
                 "spatial_bias": {"variant": "off"}, \(outages)
                 "people": [{"id": "tag", "rate_hz": 2, "loss": 0, "path": [{"t": 0, "x": 7.5, "y": 2}]}]}
                """)
    }

    /// gw-b, the only gateway of the tag's room, down from 300 s to 600 s.
    static let roomBDown = #""outages": [{"gateway": "gw-b", "from_s": 300, "to_s": 600}],"#

    @Test func theOutagesListIsReadWithTheScenario() throws {
        let list = [
            #"{"gateway": "gw-b", "from_s": 300, "to_s": 600}"#, #"{"gateway": "gw-a", "from_s": 500, "to_s": 700.5}"#,
            #"{"gateway": "gw-b", "from_s": 600, "to_s": 900}"#,
        ]
        let scenario = try Self.scenario(outages: "\"outages\": [\(list.joined(separator: ", "))],")
        #expect(
            scenario.outages == [
                RoomScenario.Outage(gateway: "gw-b", from: 300, to: 600),
                RoomScenario.Outage(gateway: "gw-a", from: 500, to: 700.5),
                RoomScenario.Outage(gateway: "gw-b", from: 600, to: 900),
            ])
        #expect(try Self.scenario().outages.isEmpty)
        let start = scenario.startTime
        #expect(scenario.isDown("gw-b", at: start + 300) && !scenario.isDown("gw-b", at: start + 299.9))
        #expect(scenario.isDown("gw-b", at: start + 600) && !scenario.isDown("gw-a", at: start + 700.5))
        #expect(scenario.darkRooms(at: start + 550) == ["a", "b"])
        #expect(scenario.darkRooms(at: start + 100).isEmpty)
        // What BeaconBridge's rules are told, at every start and end.
        let announced = scenario.offlineAnnouncements
        #expect(announced.map { $0.time - start } == [300, 500, 600, 700.5, 900])
        #expect(announced.map(\.gateways) == [["gw-b"], ["gw-a", "gw-b"], ["gw-a", "gw-b"], ["gw-b"], []])
    }

    @Test(arguments: [
        (#"[{"gateway": "gw-z", "from_s": 10, "to_s": 20}]"#, "outages[0].gateway", ScenarioError.Kind.invalid),
        (#"[{"from_s": 10, "to_s": 20}]"#, "outages[0].gateway", .malformed),
        (#"[{"gateway": "gw-a", "from_s": 20, "to_s": 20}]"#, "outages[0].to_s", .invalid),
        (#"[{"gateway": "gw-a", "from_s": 30, "to_s": 20}]"#, "outages[0].to_s", .invalid),
        (#"[{"gateway": "gw-a", "from_s": -1, "to_s": 20}]"#, "outages[0].from_s", .invalid),
        (#"[{"gateway": "gw-a", "from_s": 800, "to_s": 901}]"#, "outages[0].to_s", .invalid),
        (#"[{"gateway": "gw-a", "from_s": 10}]"#, "outages[0].to_s", .malformed),
        (#"[{"gateway": "gw-a", "from_s": 10, "to_s": 20, "until": 30}]"#, "outages[0].until", .malformed),
        (
            #"[{"gateway": "gw-a", "from_s": 10, "to_s": 20}, {"gateway": "gw-b", "from_s": 15, "to_s": 30}, {"gateway": "gw-a", "from_s": 19, "to_s": 40}]"#,
            "outages[2]", .invalid
        ),
        (#"{"gateway": "gw-a"}"#, "outages", .malformed),
    ])
    func badOutagesNameTheirPlace(list: String, path: String, kind: ScenarioError.Kind) {
        do {
            _ = try Self.scenario(outages: "\"outages\": \(list),")
            Issue.record("accepted \(list)")
        } catch {
            #expect(error.path == path, "\(error)")
            #expect(error.kind == kind, "\(error)")
        }
    }

    @Test func aGatewayThatIsDownHearsNothingAndIsHeardByNone() throws {
        let run = RoomScenarioRun(try Self.scenario(outages: Self.roomBDown))
        let world = run.world()
        let start = run.scenario.startTime
        let down = start + 300..<start + 600
        let fromB = world.sightings.filter { $0.gatewayID == "gw-b" }
        #expect(!fromB.isEmpty)
        #expect(!fromB.contains { down.contains($0.time) })
        #expect(fromB.contains { $0.time < down.lowerBound } && fromB.contains { $0.time >= down.upperBound })
        #expect(world.sightings.contains { $0.gatewayID == "gw-a" && down.contains($0.time) })
        #expect(run.simulator.observations(gateway: 1).allSatisfy { !down.contains($0.timestamp) })
        // Self-calibration: gw-b's identity beacon is silent and it hears gw-a's on neither side of the window.
        let identity = world.identity
        #expect(!identity.contains { down.contains($0.time) })
        #expect(identity.contains { $0.time >= down.upperBound && $0.transmitter == "gw-b" })
        #expect(identity.contains { $0.time < down.lowerBound && $0.receiver == "gw-b" })
        // The noise-free sightings of the `+arbiter` oracle rows leave gw-b out as well.
        #expect(!world.oracle.sightings(fixed: false).contains { $0.gatewayID == "gw-b" && down.contains($0.time) })
    }

    @Test func outsideTheOutageTheWorldIsTheSameAsWithout() throws {
        let with = RoomScenarioRun(try Self.scenario(outages: Self.roomBDown))
        let without = RoomScenarioRun(try Self.scenario())
        let start = with.scenario.startTime
        let down = start + 300..<start + 600
        for gateway in 0..<2 {
            let all = without.simulator.observations(gateway: gateway)
            let kept = with.simulator.observations(gateway: gateway)
            #expect(kept == all.filter { gateway == 0 || !down.contains($0.timestamp) })
            #expect(gateway == 0 || kept.count < all.count)
        }
        let a = with.world()
        let b = without.world()
        // gw-a publishes the same sightings; gw-b the same up to its outage, and again (a new tracker) after it.
        #expect(a.sightings.filter { $0.gatewayID == "gw-a" } == b.sightings.filter { $0.gatewayID == "gw-a" })
        #expect(
            a.sightings.filter { $0.gatewayID == "gw-b" && $0.time < down.lowerBound }
                == b.sightings.filter { $0.gatewayID == "gw-b" && $0.time < down.lowerBound })
        // (Two gateways: every identity report in the window involves gw-b.)
        #expect(a.identity == b.identity.filter { !down.contains($0.time) })
        // The training phase (before time 0) is not reached by the outage.
        #expect(a.training.vectors == b.training.vectors)
    }

    @Test func beaconBridgeShowsTheDarkRoomUnknownAndTheNearestRuleTheNeighbour() throws {
        let scenario = try Self.scenario(outages: Self.roomBDown)
        var changes: [RoomChange] = []
        let summary = RoomScenarioRun(scenario).run { changes.append($0) }
        let rules = Dictionary(uniqueKeysWithValues: summary.rules.map { ($0.name, $0) })
        let start = scenario.startTime
        // beaconbridge: b, `unknown` from the announcement at 300 s until gw-b is back at 600 s, b at the end.
        // (In between, at 600 s, the arbiter decides afresh at once on the evidence it has, which is gw-a's only
        // until gw-b's first report: `a` for some seconds. docs/rooms.md, "Gateway outages".)
        let toUnknown = try #require(changes.firstIndex { $0.to == RoomArbiter.unknownRoom })
        #expect(changes.prefix(toUnknown).map(\.to) == ["b"])
        #expect(changes[toUnknown].time == start + 300)
        #expect(changes.dropFirst(toUnknown + 1).allSatisfy { $0.time >= start + 600 })
        #expect(changes.last?.to == "b" && changes.last.map { $0.time < start + 630 } == true)
        for name in ["beaconbridge", "calibrated", "trained", "nearest", "distance-margin", "knn"] {
            let rule = try #require(rules[name], "\(name)")
            #expect(rule.darkSeconds == 300, "\(name)")  // ticks 300...599
        }
        for name in ["beaconbridge", "calibrated", "trained", "uncalibrated"] {
            let rule = try #require(rules[name])
            #expect(rule.darkElsewhereSeconds == 0, "\(name)")
            #expect(rule.darkElsewhereShare == 0, "\(name)")
            #expect(rule.wrongSeconds >= 300, "\(name)")  // `unknown` is not the true room
            #expect(rule.confidentlyWrongSeconds < 30, "\(name)")
        }
        // The peers only stop hearing gw-b: the tag moves to the neighbour (Bermuda users' #764).
        for name in ["nearest", "distance-margin"] {
            let rule = try #require(rules[name])
            #expect(rule.darkElsewhereSeconds > 250, "\(name)")
            #expect(rule.confidentlyWrongSeconds >= rule.darkElsewhereSeconds, "\(name)")
        }
        // Without the outage nobody's room is dark, and the share is undefined.
        let calm = RoomScenarioRun(try Self.scenario()).run()
        #expect(calm.rules.allSatisfy { $0.darkSeconds == 0 && $0.darkElsewhereShare == nil })
        #expect(try #require(calm.rules.first { $0.name == "nearest" }).confidentlyWrongSeconds == 0)
    }

    @Test func confidentlyWrongCountsOnlyANamedWrongRoom() throws {
        // The two-room file (a tag at rest in a, a mover a → b → a) with gw-a, a's only gateway, down 100-200 s.
        let scenario = try RoomScenario(
            json: RoomSimulationTests.twoRooms.replacingOccurrences(
                of: #""duration_s": 1800,"#,
                with: #""duration_s": 1800, "outages": [{"gateway": "gw-a", "from_s": 100, "to_s": 200}],"#))
        var score = RoomScore(scenario: scenario, simulator: RoomSimulator(scenario))
        let still = scenario.people[0].beaconID
        for second in 1...1800 {
            let t = Double(second)
            score.sample(at: scenario.startTime + t, interval: 1) { id in
                guard id == still else { return t >= 604 && t < 1204 ? .some("b") : .some("a") }
                switch t {
                case ..<50: return nil  // undecided
                case ..<100: return .some("b")  // confidently wrong
                case ..<150: return .some(RoomArbiter.unknownRoom)  // its room dark: not confident
                case ..<200: return .some("b")  // its room dark and shown elsewhere
                case ..<250: return .some(nil)  // not_home
                default: return .some("a")
                }
            }
        }
        let rule = score.finish(name: "test")
        // The existing figure keeps its meaning: samples 11-49 undecided, then 200 s of every kind of wrong.
        #expect(rule.wrongSeconds == 39 + 200)
        #expect(rule.confidentlyWrongSeconds == 100)
        // Both people are in a (dark) for samples 100...199; the tag is shown in b for 50 of them.
        #expect(rule.darkSeconds == 200)
        #expect(rule.darkElsewhereSeconds == 50)
        #expect(rule.darkElsewhereShare == 0.25)
        #expect(abs(rule.confidentlyWrongShare - 100 / rule.judgedSeconds) < 1e-12)
        let merged = RoomSummary.merged([
            RoomSummary(sightings: 1, rules: [rule]), RoomSummary(sightings: 1, rules: [rule]),
        ])
        #expect(merged.rules[0].confidentlyWrongSeconds == 200)
        #expect(merged.rules[0].darkSeconds == 400 && merged.rules[0].darkElsewhereSeconds == 100)
    }
}
