import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The oracle rows of the rooms table (`RoomOracle`, docs/rooms.md "The oracle floor"): small hand-made floor
/// plans with fixed seeds, figures checked against values computed by hand.
@Suite(.ownThread) struct RoomOracleTests {
    /// Two 5 × 4 m rooms side by side with no wall, gw-a at (1, 2) and gw-b at (9, 2); `radio` and `arbiter`
    /// blocks and the people are spliced in. No spatial bias (the figures are computed by hand on the geometry).
    static func scenario(radio: String, gatewayB: String = "", arbiter: String = "", people: String) throws
        -> RoomScenario
    {
        try RoomScenario(
            json: """
                {"kind": "rooms", "name": "oracle", "seed": 5, "duration_s": 600, "radio": \(radio),
                 "rooms": [{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}],
                 "gateways": [{"id": "gw-a", "x": 1, "y": 2}, {"id": "gw-b", "x": 9, "y": 2\(gatewayB)}],
                 "spatial_bias": {"variant": "off"},
                 \(arbiter) "people": \(people)}
                """)
    }

    /// Every random radio term off: no shadowing, fading, channel offsets, body blocking or loss.
    static let quiet = """
        {"model": "pessimistic", "shadowing_sigma_db": 0, "fading_sigma_db": 0, "channel_offset_sigma_db": 0,
         "body_blocking": {"mean_interval_s": 0}}
        """

    /// A walk from (2.45, 2) at 300 s to (8.45, 2) at 306 s (1 m/s): it crosses x = 5 at 302.55 s.
    static let walker = """
        [{"id": "walker", "rate_hz": 2, "loss": 0, "path": [{"t": 0, "x": 2.45, "y": 2}, {"t": 300, "x": 2.45, "y": 2},
          {"t": 306, "x": 8.45, "y": 2}]},
         {"id": "still", "rate_hz": 1, "loss": 0, "path": [{"t": 0, "x": 4, "y": 2}]}]
        """

    static func rows(_ summary: RoomSummary) -> [String: RoomSummary.Rule] {
        Dictionary(uniqueKeysWithValues: (summary.rules + summary.oracles).map { ($0.name, $0) })
    }

    @Test func withEveryRandomTermOffTheMeanOracleIsTheGeometry() throws {
        let scenario = try Self.scenario(radio: Self.quiet, people: Self.walker)
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        for person in scenario.people.indices {
            for second in 0...600 {
                let geometry = world.oracle.room(.geometry, person: person, second: second)
                #expect(world.oracle.room(.mean(window: 0), person: person, second: second) == geometry)
                #expect(world.oracle.room(.fixed, person: person, second: second) == geometry)
            }
        }
        // "still" at (4, 2): 3 m from gw-a, 5 m from gw-b; -59 dBm at 1 m, n = 2.7:
        // a: -59 - 27·log10(3) = -71.882, b: -59 - 27·log10(5) = -77.873.
        let levels = try #require(world.oracle.level(.mean(window: 0), person: 1, second: 100))
        #expect(abs(levels[0] - -71.882) < 0.001)
        #expect(abs(levels[1] - -77.873) < 0.001)
        let rows = Self.rows(run.run())
        let mean = try #require(rows["oracle-mean"])
        let geometry = try #require(rows["oracle-geometry"])
        #expect(mean.wrongSeconds == geometry.wrongSeconds)
        #expect(mean.latencies == geometry.latencies)
        #expect(mean.falseSwitches == geometry.falseSwitches)
        // By hand: the walker's true stay in b begins at the 302.6 s sample of the truth (x = 5.05); the oracle's
        // tick at 303 s (x = 5.45: 4.45 m from gw-a, 3.55 m from gw-b) shows b, so the latency is 0.4 s; the
        // tick at 302 s (x = 4.45) shows a, still right. No wrong second, no false switch, one true change.
        #expect(geometry.trueChanges == 1)
        #expect(geometry.missed == 0)
        #expect(geometry.latencies.count == 1)
        #expect(abs((geometry.latencies.first ?? -1) - 0.4) < 1e-6)
        #expect(geometry.wrongSeconds == 0)
        #expect(geometry.falseSwitches == 0)
        #expect(geometry.judgedSeconds == 2 * 590)  // two people, ticks 11...600
    }

    @Test func aFixedTenDecibelBiasOnTheOtherRoomsLinkMakesTheMeanOracleWrongForTheStay() throws {
        // gw-b reads 10 dB hot and the arbiter is not told (offsets {}: all 0): a fixed bias on every b link.
        let scenario = try Self.scenario(
            radio: Self.quiet, gatewayB: #", "receiver_offset_db": 10"#,
            arbiter: #""arbiter": {"receiver_offsets_db": {}},"#,
            people: #"[{"id": "still", "rate_hz": 1, "loss": 0, "path": [{"t": 0, "x": 4, "y": 2}]}]"#)
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        // By hand: a -71.882, b -77.873 + 10 = -67.873: b is 4.0 dB louder although the tag is in a.
        let levels = try #require(world.oracle.level(.fixed, person: 0, second: 100))
        #expect(abs(levels[0] - -71.882) < 0.001)
        #expect(abs(levels[1] - -67.873) < 0.001)
        let rows = Self.rows(run.run())
        for name in ["oracle-mean", "oracle-mean-60s", "oracle-fixed"] {
            let row = try #require(rows[name])
            #expect(row.judgedSeconds == 590)
            #expect(row.wrongSeconds == 590, "\(name)")
            #expect(row.wrongShare == 1)
        }
        #expect(try #require(rows["oracle-geometry"]).wrongSeconds == 0)
        // The split of a rule's wrong time: showing b the whole time is wrong where oracle-mean is wrong too.
        var score = RoomScore(scenario: scenario, segments: world.truth, oracle: world.oracle)
        for second in 1...600 { score.sample(at: scenario.startTime + Double(second), interval: 1) { _ in .some("b") } }
        let wrongB = score.finish(name: "b")
        #expect(wrongB.wrongSeconds == 590)
        #expect(wrongB.wrongTime.wrongMeanFloor == 590)
        #expect(wrongB.wrongTime.wrongFixedFloor == 590)
        // ...and calibrated (the arbiter told gw-b's offset), nothing is left of the bias.
        let calibrated = try Self.scenario(
            radio: Self.quiet, gatewayB: #", "receiver_offset_db": 10"#,
            people: #"[{"id": "still", "rate_hz": 1, "loss": 0, "path": [{"t": 0, "x": 4, "y": 2}]}]"#)
        #expect(try #require(Self.rows(RoomScenarioRun(calibrated).run())["oracle-mean"]).wrongSeconds == 0)
    }

    @Test func theTrueLevelIsTheReportsLessTheFastFadingOfTheSameWorld() throws {
        // Channel offsets off, so a heard report's RSSI is the link's level plus fading (σ 3 dB) and rounding.
        let scenario = try Self.scenario(
            radio: #"{"model": "pessimistic", "channel_offset_sigma_db": 0}"#,
            people: #"[{"id": "still", "rate_hz": 5, "loss": 0, "path": [{"t": 0, "x": 2, "y": 2}]}]"#)
        let simulator = RoomSimulator(scenario)
        let person = scenario.people[0]
        let schedule = simulator.advertisements(of: person, index: 0)
        let link = simulator.link(person, index: 0, gateway: 0, schedule: schedule)
        #expect(link.observations == simulator.observations(gateway: 0))
        let level = Dictionary(
            zip(schedule.map { scenario.startTime + $0 }, link.levels), uniquingKeysWith: { a, _ in a })
        let residuals = link.observations.compactMap { observation in
            observation.rssi.flatMap { rssi in level[observation.timestamp].map { Double(rssi) - $0 } }
        }
        #expect(residuals.count > 2_000)
        let mean = residuals.reduce(0, +) / Double(residuals.count)
        let sd = (residuals.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(residuals.count)).squareRoot()
        #expect(abs(mean) < 0.2)
        #expect(sd > 2.8 && sd < 3.3)
        // With shadowing and blocking on, the true level moves: the mean oracle is not the geometry everywhere.
        let world = RoomScenarioRun(scenario).world()
        let levels = (0...600).compactMap { world.oracle.level(.mean(window: 0), person: 0, second: $0)?[0] }
        #expect(Set(levels).count > 100)
    }
}
