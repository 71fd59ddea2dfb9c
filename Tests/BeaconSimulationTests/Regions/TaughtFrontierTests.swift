import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation
@testable import BeaconTracking

/// `simulate --frontier --teach`: the taught links' grid (`TaughtFrontierRule`), its taught and oracle rows on the
/// untaught rows' streams, and the fallback clause's verdict (`TaughtFrontierVerdict`).
@Suite(.ownThread) struct TaughtFrontierTests {
    typealias F = ScenarioFixtures

    @Test func teachAddsTaughtAndOracleRowsComputedFromTheSameStreams() throws {
        let scenario = Scenario(
            seed: 3, duration: 500, radio: TeachPhaseTests.radio(), regions: [F.room],
            beacons: [TeachPhaseTests.walker(1), TeachPhaseTests.walker(2, rate: 1)])
        let other = TaughtFrontierRule(
            enterAllowance: 4, hysteresis: 7, enterMargin: 2, enterEvidence: 15, exitPeriod: 20)
        let grid = [TaughtFrontierRule.current, other]
        let rules = Array(FrontierRule.family.prefix(2))
        var plain = SimulationFrontier(rules: rules)
        var frontier = SimulationFrontier(rules: rules, teach: TeachPhase(), taughtGrid: grid)
        plain.add(scenario)
        frontier.add(scenario)
        let points = frontier.points()
        let plainPoints = plain.points()
        #expect(points.count == plainPoints.count + 2 * grid.count)
        #expect(points.filter { $0.family == .taught }.count == grid.count)
        #expect(points.filter { $0.family == .oracle }.count == grid.count)
        // The untaught rows are the plain frontier's.
        for point in plainPoints {
            let same = points.first { $0.name == point.name }
            #expect(same?.falsePerBeaconHour == point.falsePerBeaconHour, "\(point.name)")
            #expect(same?.rightFraction == point.rightFraction, "\(point.name)")
        }
        // Today's taught levels and keys are `runTaught`'s taught and oracle detectors, on the same stream.
        let summary = ScenarioRun(scenario).runTaught(TeachPhase())
        for (family, name) in [
            (SimulationFrontier.Point.Family.taught, ScenarioRun.taughtName), (.oracle, ScenarioRun.oracleName),
        ] {
            let detector = try #require(summary.baselines.first { $0.name == name })
            let point = try #require(
                points.first { $0.name == "\(family.rawValue)-\(TaughtFrontierRule.current.name)" })
            #expect(point.family == family)
            #expect(point.falsePerBeaconHour == detector.falseTransitionsPerBeaconHour)
            #expect(point.rightFraction == detector.rightFraction)
            #expect(
                point.madeFeltEnterP95 == SimulationSummary.percentile(detector.feltEnterLatencies(atLeast: 1), 0.95))
            #expect(point.madeFeltExitP95 == SimulationSummary.percentile(detector.feltExitLatencies, 0.95))
            #expect(point.feltMissedEnters == detector.feltMissedEnters(atLeast: 1))
            #expect(point.feltMissedExits == detector.feltMissedExits)
        }
        // Another grid point is that rule on the same stream, with the oracle's links.
        let links = TeachPhase().teach(scenario)
        let run = ScenarioRun(scenario).run(baselines: false, taught: other.regions(scenario, links: links.oracle))
        let point = try #require(points.first { $0.name == "oracle-\(other.name)" })
        #expect(point.rightFraction == run.rightFraction)
        #expect(point.falsePerBeaconHour == run.falseTransitionsPerBeaconHour)
        #expect(summary.pairs.count == 2 && run.pairs.count == 2)
    }

    @Test func aGridPointSetsTheLevelsFromTheTeachAndTheKeys() throws {
        let beacons = [TeachPhaseTests.walker(1), TeachPhaseTests.walker(2)]
        let scenario = Scenario(
            seed: 1, duration: 60, radio: TeachPhaseTests.radio(), regions: [F.room], beacons: beacons)
        let boundary = TaughtLevel(level: -70, spread: 2, reports: 30, seconds: 30)
        let links = [TeachPhaseTests.key(1): TaughtRegionLink(boundary: boundary)]
        let point = TaughtFrontierRule(
            enterAllowance: 1.5, hysteresis: 6, enterMargin: 2, enterEvidence: 15, exitPeriod: 20)
        #expect(point.name == "a1.5-h6-m2-e15-x20")
        let regions = point.regions(scenario, links: links)
        #expect(regions.rules.count == 2)
        let taught = try #require(regions.rules.first { $0.name.hasSuffix(beacons[0].beaconID) })
        #expect(taught.enter == .rssi(-71.5) && taught.exit == .rssi(-77.5))
        // A link whose teach heard nothing keeps the configured levels; the keys apply to both.
        let untaught = try #require(regions.rules.first { $0.name.hasSuffix(beacons[1].beaconID) })
        #expect(untaught.enter == F.room.enter && untaught.exit == F.room.exit)
        for rule in regions.rules {
            #expect(rule.enterMargin == 2 && rule.enterEvidence == 15 && rule.exitPeriod == 20)
        }
        #expect(TaughtFrontierRule.current.name == "a2-h5-m3.5-e30-x30")
    }

    @Test func gridSpecsParseIntoTheProductAndRefuseMalformedOnes() throws {
        let one = try #require(TaughtFrontierRule.grid(spec: "2:5:3.5:30:30"))
        #expect(one == [TaughtFrontierRule.current])
        let many = try #require(TaughtFrontierRule.grid(spec: "0,2:5,7:3.5:15,30,60:30"))
        #expect(many.count == 12)
        #expect(many.first?.enterAllowance == 0 && many.last?.enterAllowance == 2)
        #expect(Set(many.map(\.name)).count == 12)
        for bad in [
            "", "2:5:3.5:30", "2:5:3.5:30:30:1", "2:x:3.5:30:30", "2:5:3.5::30", "2:5,:3.5:30:30", "-1:5:3.5:30:30",
            "2:0:3.5:30:30", "2:5:3.5:30:0", "2:5:3.5:inf:30",
        ] {
            #expect(TaughtFrontierRule.grid(spec: bad) == nil, "\(bad)")
        }
        #expect(TaughtFrontierRule.defaultGrid.contains(TaughtFrontierRule.current))
    }

    static func point(
        _ name: String, _ family: SimulationFrontier.Point.Family, falsePerHour: Double, enter: Double, fast: Double,
        exit: Double
    ) -> SimulationFrontier.Point {
        var point = SimulationFrontier.Point(
            name: name, family: family, falsePerBeaconHour: falsePerHour, falseExitsDuringStays: 0, missed: 0,
            rightFraction: 0.9, enterP95: 0, enterP95Fast: 0, exitP95: 0)
        point.madeFeltEnterP95 = enter
        point.madeFeltEnterP95Fast = fast
        point.madeFeltExitP95 = exit
        return point
    }

    @Test func verdictComparesEachTaughtRowWithTheOracleAtNoMoreFalseTransitions() throws {
        let points = [
            Self.point("oA", .oracle, falsePerHour: 0.5, enter: 12, fast: 10, exit: 35),
            Self.point("oB", .oracle, falsePerHour: 0.7, enter: 9, fast: 12, exit: 38),
            Self.point("oC", .oracle, falsePerHour: 0.6, enter: 5, fast: 4, exit: 50),  // exit too slow
            Self.point("oD", .oracle, falsePerHour: 0.9, enter: 4, fast: 3, exit: 30),  // too many false
            Self.point("e", .engine, falsePerHour: 0.1, enter: 1, fast: 1, exit: 1),  // not an oracle row
            Self.point("t1", .taught, falsePerHour: 0.6, enter: 17, fast: 14, exit: 39),
            Self.point("t2", .taught, falsePerHour: 0.7, enter: 14, fast: 15, exit: 30),
            Self.point("t3", .taught, falsePerHour: 0.8, enter: 5, fast: 5, exit: 30),
            Self.point("t4", .taught, falsePerHour: 0.4, enter: 10, fast: 10, exit: 30),
            Self.point("t5", .taught, falsePerHour: 0.5, enter: 10, fast: 10, exit: 41),
        ]
        let verdict = TaughtFrontierVerdict(points: points, falseGoal: 0.71, exitBound: 40)
        #expect(verdict.oracleFastest?.name == "oB")
        #expect(verdict.oracleFastestFast?.name == "oA")
        #expect(verdict.candidates.map(\.point.name) == ["t4", "t1", "t2"])
        let byName = Dictionary(uniqueKeysWithValues: verdict.candidates.map { ($0.point.name, $0) })
        // t1 against oA alone (12 / 10 s, so within 18 / 15 s); t2 against oA and oB (9 / 10 s: 14 > 13.5).
        #expect(byName["t1"]?.withinRatio == true)
        #expect(byName["t1"]?.oracleEnterP95 == 12 && byName["t1"]?.oracleEnterP95Fast == 10)
        #expect(byName["t2"]?.withinRatio == false)
        #expect(byName["t2"]?.oracleEnterP95 == 9 && byName["t2"]?.oracleEnterP95Fast == 10)
        // No oracle row at 0.4 or fewer: no reference, not within.
        #expect(byName["t4"]?.withinRatio == false && byName["t4"]?.oracleEnterP95 == nil)
    }
}
