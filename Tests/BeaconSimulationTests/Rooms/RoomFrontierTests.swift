import TestSupport
import Testing

@testable import BeaconRooms
@testable import BeaconSimulation

/// The rooms frontier (`RoomFrontier`, `simulate --frontier` on rooms scenarios) on a tiny case: two rooms, a
/// walker and a tag at rest, three variants.
@Suite(.ownThread) struct RoomFrontierTests {
    static func tiny() throws -> RoomScenario {
        try RoomScenario(
            json: """
                {"kind": "rooms", "name": "tiny", "seed": 4, "duration_s": 700, "radio": {"model": "pessimistic"},
                 "rooms": [{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}],
                 "walls": [{"from": [5, 0], "to": [5, 1.5], "attenuation_db": 6.9},
                           {"from": [5, 2.5], "to": [5, 4], "attenuation_db": 6.9}],
                 "gateways": [{"id": "gw-a", "x": 1, "y": 2}, {"id": "gw-b", "x": 9, "y": 2}],
                 "people": [{"id": "walker", "rate_hz": 5, "path": [{"t": 0, "x": 2, "y": 3}, {"t": 300, "x": 2, "y": 3},
                             {"t": 304, "x": 5.5, "y": 2}, {"t": 307, "x": 8, "y": 3}, {"t": 600, "x": 8, "y": 3},
                             {"t": 603, "x": 5.5, "y": 2}, {"t": 607, "x": 2, "y": 3}]},
                            {"id": "tag", "rate_hz": 1, "path": [{"t": 0, "x": 3, "y": 1}]}]}
                """)
    }

    /// The default, a faster fast path, and a rule that never switches (both paths off: 40 dB margins).
    static let variants = [
        RoomFrontier.Variant(margin: 8, dwell: 4),
        RoomFrontier.Variant(margin: 6, dwell: 2, rise: 3),
        RoomFrontier.Variant(margin: 40, slowMargin: 40),
    ]

    @Test func everyRowIsScoredOnTheSameWorldAndTheFrontierIsTheUndominatedRules() throws {
        let scenario = try Self.tiny()
        var frontier = RoomFrontier(variants: Self.variants)
        frontier.add(scenario)
        let points = frontier.points()
        #expect(frontier.runCount == 1)
        #expect(
            points.map(\.name)
                == [
                    "beaconbridge", "nearest", "distance-margin", "arbiter-m8-d4", "arbiter-m6-d2-r3",
                    "arbiter-m40-sm40",
                ]
                + RoomOracle.tableKinds.map(\.name)
                + ["oracle-fp", "oracle-fp-diff", "oracle-fp-room", "oracle-fp-room-diff", "oracle-fp-felt"]
                + ["oracle-mean+arbiter", "oracle-fixed+arbiter"])
        let byName = Dictionary(uniqueKeysWithValues: points.map { ($0.name, $0) })
        // The variant equal to the defaults has the default's figures exactly.
        let arbiter = try #require(byName["beaconbridge"])
        let same = try #require(byName["arbiter-m8-d4"])
        #expect(same.wrongShare == arbiter.wrongShare)
        #expect(same.falsePerBeaconHour == arbiter.falsePerBeaconHour)
        #expect(same.latencyP95 == arbiter.latencyP95)
        // A variant's figures are those of the arbiter with its settings scored alone on the run's world.
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        let faster = run.score(
            RoomArbiter(settings: Self.variants[1].applied(to: run.scenario.arbiter)), stream: world.sightings,
            in: world)
        #expect(try #require(byName["arbiter-m6-d2-r3"]).wrongShare == faster.wrongShare)
        #expect(try #require(byName["arbiter-m6-d2-r3"]).falsePerBeaconHour == faster.falseSwitchesPerHour)
        // The rule with both paths off (40 dB margins) switches only when the current room's evidence has aged
        // out: it misses at least one of the walker's two moves, so its p95 (of two) is infinitely late.
        let stuck = try #require(byName["arbiter-m40-sm40"])
        #expect(stuck.trueChanges == 2)
        #expect(stuck.missed >= 1)
        #expect(stuck.latencyP95 == .infinity)
        // Pareto: exactly the rules no other rule dominates on (wrong, false/b-h, p95); oracles never.
        let rules = points.filter { $0.family != .oracle }
        for point in points {
            let dominated = rules.contains { other in
                other.wrongShare <= point.wrongShare && other.falsePerBeaconHour <= point.falsePerBeaconHour
                    && other.latencyP95 <= point.latencyP95
                    && (other.wrongShare < point.wrongShare || other.falsePerBeaconHour < point.falsePerBeaconHour
                        || other.latencyP95 < point.latencyP95)
            }
            #expect(point.pareto == (point.family != .oracle && !dominated), "\(point.name)")
        }
        #expect(points.contains { $0.pareto })
    }

    @Test func withTrueLevelsEveryVariantIsAlsoScoredOnTheLinksTrueLevelsAsAnOracleRow() throws {
        let scenario = try Self.tiny()
        var frontier = RoomFrontier(variants: [Self.variants[1]], trueLevels: true)
        frontier.add(scenario)
        let fed = try #require(frontier.points().first { $0.name == "arbiter-m6-d2-r3@true-levels" })
        #expect(fed.family == .oracle)
        #expect(!fed.pareto)
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        let alone = run.score(
            RoomArbiter(settings: Self.variants[1].applied(to: run.scenario.arbiter)),
            stream: world.oracle.sightings(fixed: false), in: world)
        #expect(fed.wrongShare == alone.wrongShare)
        #expect(fed.falsePerBeaconHour == alone.falseSwitchesPerHour)
        #expect(fed.missed == alone.missed)
    }

    @Test func beatingARuleMeansEveryFigureAndNoMoreMissedChanges() {
        func point(_ wrong: Double, _ falses: Double, _ p50: Double, _ p95: Double, missed: Int = 0)
            -> RoomFrontier.Point
        {
            RoomFrontier.Point(
                name: "x", family: .variant, wrongShare: wrong, falsePerBeaconHour: falses, trueChanges: 10,
                missed: missed, latencyP50: p50, latencyP95: p95)
        }
        let reference = point(0.10, 8, 9, 68)
        #expect(point(0.09, 7, 8, 60).beatsOnEveryFigure(reference))
        #expect(!point(0.09, 7, 8, 68).beatsOnEveryFigure(reference))  // p95 only equal
        #expect(!point(0.09, 9, 8, 60).beatsOnEveryFigure(reference))
        #expect(!point(0.09, 7, 8, 60, missed: 1).beatsOnEveryFigure(reference))
    }

    @Test func theGridIsBoundedAndNamesItsKeys() {
        #expect(RoomFrontier.Variant.grid.count == 136)
        #expect(Set(RoomFrontier.Variant.grid.map(\.name)).count == 136)
        #expect(RoomFrontier.Variant(margin: 8, dwell: 4).name == "arbiter-m8-d4")
        #expect(
            RoomFrontier.Variant(slowMargin: 0.5, slowDwell: 20, medianWindow: 15).name == "arbiter-sm0.5-sd20-w15")
        var settings = RoomArbiterSettings()
        settings = RoomFrontier.Variant(rise: 3, medianWindow: 30).applied(to: settings)
        #expect(settings.rise == 3)
        #expect(settings.medianWindow == 30)
        #expect(settings.margin == 8)
    }
}
