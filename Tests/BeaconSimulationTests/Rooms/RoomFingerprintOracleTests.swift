import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The fingerprint floor (`RoomFingerprintOracle`, docs/rooms.md "The fingerprint floor"): the nearest
/// fingerprint to perfectly averaged levels, by hand-made levels and on the two-room plan of `RoomOracleTests`.
@Suite(.ownThread) struct RoomFingerprintOracleTests {
    typealias Rows = [(room: String, levels: [Double?])]

    @Test func absoluteMatchingTakesTheNearestLevelsAndDifferencesTheNearestPattern() {
        let rows: Rows = [("a", [-60, -75]), ("b", [-75, -88])]
        // a's pattern 20 dB quieter (another device, a pocket): a is 20 dB off on both gateways (400 by mean
        // square), b 5 and 7 dB (37): absolute matching takes b; with the common offset out a is exact (0) and
        // b is 1 dB off either way (1).
        #expect(RoomFingerprintOracle.nearest([-80, -95], rows, .absolute) == "b")
        #expect(RoomFingerprintOracle.nearest([-80, -95], rows, .differences) == "a")
        #expect(RoomFingerprintOracle.nearest([-61, -74], rows, .absolute) == "a")
        // A fingerprint that lacks a gateway compares on the others; for differences one left is not enough.
        let partial: Rows = [("a", [-60, nil]), ("b", [-75, -88])]
        #expect(RoomFingerprintOracle.nearest([-61, -90], partial, .absolute) == "a")
        #expect(RoomFingerprintOracle.nearest([-61, -90], partial, .differences) == "b")
        #expect(RoomFingerprintOracle.nearest([-61, -90], [("a", [nil, nil])], .absolute) == nil)
    }

    @Test func onTheQuietTwoRoomPlanEveryFingerprintPlacesTheTagAndTheWalker() throws {
        let scenario = try RoomOracleTests.scenario(radio: RoomOracleTests.quiet, people: RoomOracleTests.walker)
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        let sources = [
            RoomFingerprintOracle(oracle: world.oracle, training: world.training),
            RoomFingerprintOracle(oracle: world.oracle),
            RoomFingerprintOracle(oracle: world.oracle, training: world.training, evidence: .felt),
        ]
        #expect(world.training.book["a"] != nil && world.training.book["b"] != nil)
        for fingerprints in sources {
            for match in RoomFingerprintOracle.Match.allCases {
                // "still" at (4, 2), 1 m inside a, the whole run; the walker at x = 2.45 (a), then 8.45 (b).
                for second in stride(from: 0, through: 600, by: 10) {
                    #expect(fingerprints.room(match, person: 1, second: second) == "a", "\(fingerprints.name(match))")
                }
                #expect(fingerprints.room(match, person: 0, second: 100) == "a")
                #expect(fingerprints.room(match, person: 0, second: 400) == "b")
            }
        }
        let names = Set(run.run().oracles.map(\.name))
        for name in ["oracle-fp", "oracle-fp-diff", "oracle-fp-room", "oracle-fp-room-diff", "oracle-fp-felt"] {
            #expect(names.contains(name), "\(name) missing from \(names.sorted())")
        }
    }

    @Test func theTrainedBookIsMovedToTheConfiguredCalibration() throws {
        // gw-b reads 10 dB hot; the arbiter is configured with that offset, self-calibration solves its own.
        // The oracle's levels are calibrated with the configured offset, so the book's means must be too:
        // one fingerprint level, moved from self-calibration's offsets to the configured ones.
        let scenario = try RoomOracleTests.scenario(
            radio: RoomOracleTests.quiet, gatewayB: #", "receiver_offset_db": 10"#, people: RoomOracleTests.walker)
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        let fingerprints = RoomFingerprintOracle(oracle: world.oracle, training: world.training)
        let recorded = try #require(world.training.book["a"]?.levels["gw-b"]?.mean)
        let row = try #require(fingerprints.means[0].first { $0.room == "a" })
        let moved = try #require(row.levels[1])
        let selfCalibrated = world.training.offsets["gw-b"] ?? 0
        let configured = run.scenario.arbiter.receiverOffsets["gw-b"] ?? 0
        #expect(abs(moved - (recorded + selfCalibrated - configured)) < 1e-9)
        for second in stride(from: 0, through: 600, by: 10) {
            #expect(fingerprints.room(.absolute, person: 1, second: second) == "a")
        }
    }

    @Test func theFeltLevelIsTheLongRunLevelPlusThePostureOfTheStayAndTheBlockingNow() throws {
        // No shadowing, fading, channel offsets or loss: the true level now (`oracle-mean`) is the long-run level
        // plus the posture of the stay and the blocking, which is what `felt` adds. Posture σ 3 dB (no spatial
        // field), blocking every 60 s on average for 5-20 s, 8-15 dB. A still tag and a walker.
        let scenario = try RoomScenario(
            json: """
                {"kind": "rooms", "name": "felt", "seed": 7, "duration_s": 600,
                 "radio": {"model": "pessimistic", "shadowing_sigma_db": 0, "fading_sigma_db": 0,
                   "channel_offset_sigma_db": 0,
                   "body_blocking": {"mean_interval_s": 60, "min_s": 5, "max_s": 20, "min_db": 8, "max_db": 15}},
                 "rooms": [{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}],
                 "gateways": [{"id": "gw-a", "x": 1, "y": 2}, {"id": "gw-b", "x": 9, "y": 2}],
                 "spatial_bias": {"variant": "measured", "sigma_db": 0},
                 "people": \(RoomOracleTests.walker)}
                """)
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        let oracle = world.oracle
        var same = 0
        for person in 0..<2 {
            for second in 0...600 {
                let felt = try #require(oracle.level(.felt, person: person, second: second))
                let now = try #require(oracle.level(.mean(window: 0), person: person, second: second))
                // The true level is that of the last advertisement at or before the second (1-2 per second): a
                // blocking episode or a segment that starts in between is the only difference.
                if zip(felt, now).allSatisfy({ abs($0 - $1) < 1e-9 }) { same += 1 }
            }
        }
        #expect(same > 1_150, "\(same) of 1202 seconds equal to the true level")
        // And it is not the long-run level: the still tag (one stay) carries one posture per link, less 8-15 dB
        // while blocked; the walker's posture changes with the segment of its path.
        let still = (0...600).map { second in
            (oracle.level(.felt, person: 1, second: second)?[0] ?? .nan)
                - (oracle.level(.fixed, person: 1, second: second)?[0] ?? .nan)
        }
        let posture = still[0]
        #expect(abs(posture) > 1e-6)
        #expect(
            still.allSatisfy { abs($0 - posture) < 1e-9 || ($0 - posture <= -8 + 1e-9 && $0 - posture >= -15 - 1e-9) })
        #expect(still.contains { $0 - posture < -7 })
        #expect(Set([100, 303, 400].map { oracle.stay[0][1][$0] }).count == 3)
        // With neither posture nor blocking, `felt` is `fixed`: `oracle-fp-felt` is `oracle-fp` to the second.
        let quiet = try RoomOracleTests.scenario(radio: RoomOracleTests.quiet, people: RoomOracleTests.walker)
        let flatWorld = RoomScenarioRun(quiet).world()
        let fp = RoomFingerprintOracle(oracle: flatWorld.oracle, training: flatWorld.training)
        let felt = RoomFingerprintOracle(oracle: flatWorld.oracle, training: flatWorld.training, evidence: .felt)
        #expect(felt.name(.absolute) == "oracle-fp-felt")
        for person in 0..<2 {
            for second in 0...600 {
                #expect(
                    flatWorld.oracle.level(.felt, person: person, second: second)
                        == flatWorld.oracle.level(.fixed, person: person, second: second))
                #expect(
                    felt.room(.absolute, person: person, second: second)
                        == fp.room(.absolute, person: person, second: second))
            }
        }
    }
}
