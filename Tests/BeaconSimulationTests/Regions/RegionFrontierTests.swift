import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// `simulate --frontier`'s window-mean rules (`FrontierBank`) and the frontier's bookkeeping.
@Suite(.ownThread) struct RegionFrontierTests {
    @Test func windowMeanRuleEntersOnTheMeanAndExitsAfterTheTimeout() {
        let rules = [
            FrontierRule(window: 10, offset: 2, exitShortening: 0),
            FrontierRule(window: 10, offset: 20, exitShortening: 0),
            FrontierRule(window: 10, offset: 2, exitShortening: 5),
        ]
        var bank = FrontierBank(rules: rules, enterLevel: -70, exitLevel: -75, exitPeriod: 30)
        var fired: [(rule: Int, kind: TruthTransition.Kind, time: Double)] = []
        func record(_ list: [(Int, TruthTransition.Kind)], _ time: Double) {
            fired += list.map { ($0.0, $0.1, time) }
        }
        // 20 s at -60 dBm (10 dB above the enter level), then -90 dBm at 1 Hz for 60 s.
        for second in 0..<80 {
            let time = Double(second)
            var list: [(Int, TruthTransition.Kind)] = []
            bank.observe(rssi: second < 20 ? -60 : -90, at: time, into: &list)
            record(list, time)
            list.removeAll()
            bank.advance(to: time + 0.5, into: &list)
            record(list, time + 0.5)
        }
        let first = fired.filter { $0.rule == 0 }
        #expect(first.map(\.kind) == [.enter, .exit])
        #expect(first.first?.time == 0)
        // The 10 s mean stays at or above -75 dBm until half the window is at -90 (t = 25 s); exit 30 s later.
        if first.count == 2 { #expect(first[1].time >= 50 && first[1].time <= 60, "exit at \(first[1].time)") }
        #expect(fired.filter { $0.rule == 1 }.isEmpty, "-60 dBm never exceeds the enter level + 20 dB")
        let shortened = fired.filter { $0.rule == 2 }
        #expect(shortened.map(\.kind) == [.enter, .exit])
        if shortened.count == 2, first.count == 2 { #expect(shortened[1].time == first[1].time - 5) }
        #expect(bank.state(0) == .outside && bank.state(1) == .outside)
    }

    @Test func frontierPointsAgreeWithThePlainRunAndMarkTheParetoSet() {
        let walker = ScenarioFixtures.beacon(
            1,
            path: [
                Waypoint(time: 0, x: 8), Waypoint(time: 60, x: 8), Waypoint(time: 66, x: 1),
                Waypoint(time: 300, x: 1), Waypoint(time: 306, x: 8),
            ],
            rate: 5)
        let scenario = ScenarioFixtures.scenario(
            seed: 3, duration: 420, beacons: [walker], radio: ScenarioRadio(model: .pessimistic))
        let rules = Array(FrontierRule.family.prefix(6))
        var frontier = SimulationFrontier(rules: rules)
        frontier.add(scenario)
        let points = frontier.points()
        #expect(
            points.count
                == 1 + SimulationFrontier.engineGrid.count + SimulationFrontier.presets.count
                + BaselineDetector.Kind.allCases.count + 6)
        #expect(frontier.exitPeriod == 30)
        let plain = ScenarioRun(scenario).run()
        let engine = points.first { $0.name == "beaconbridge" }
        #expect(engine?.falsePerBeaconHour == plain.falseTransitionsPerBeaconHour)
        #expect(engine?.enterP95 == plain.enterLatencies.max())
        #expect(engine?.exitP95 == plain.exitLatencies.max())
        // The walker rests 1 m from the gateway, 2 m inside the 3 m enter radius, and leaves to 8 m, beyond the
        // 4.5 m exit radius + 1 m: one felt enter and one felt exit.
        #expect(engine?.feltEnterP95 == plain.feltEnterLatencies(atLeast: 1).max())
        #expect(engine?.feltExitP95 == plain.feltExitLatencies.max())
        #expect(plain.feltEnterLatencies(atLeast: 1).count + plain.feltMissedEnters(atLeast: 1) == 1)
        #expect(plain.feltExitLatencies.count + plain.feltMissedExits == 1)
        for kind in BaselineDetector.Kind.allCases {
            let baseline = plain.baselines.first { $0.name == kind.rawValue }
            let point = points.first { $0.name == kind.rawValue }
            #expect(point?.falsePerBeaconHour == baseline?.falseTransitionsPerBeaconHour)
        }
        #expect(Set(points.map(\.name)).count == points.count, "names are unique")
        #expect(points.contains { $0.pareto })
        for point in points where !point.pareto {
            // Some Pareto point is at least as good on all four figures (false transitions, felt latencies).
            #expect(
                points.contains {
                    $0.pareto && $0.falsePerBeaconHour <= point.falsePerBeaconHour
                        && $0.feltEnterP95 <= point.feltEnterP95 && $0.feltEnterP95Fast <= point.feltEnterP95Fast
                        && $0.feltExitP95 <= point.feltExitP95
                }, "\(point.name)")
        }
    }
}
