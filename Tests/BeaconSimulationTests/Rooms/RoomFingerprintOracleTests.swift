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
        for name in ["oracle-fp", "oracle-fp-diff", "oracle-fp-room", "oracle-fp-room-diff"] {
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
}
