import TestSupport
import Testing

@testable import BeaconRooms
@testable import BeaconSimulation

/// The `knn` peer rule (docs/rooms.md, "Training (issue 29, session 19)") on toy training vectors.
@Suite struct RoomNearestFingerprintsTests {
    /// Room a: gw-a loud, gw-b faint; room b the other way round; 10 vectors each with a little spread.
    static let vectors: [RoomTrainingVector] = (0..<10).flatMap { i in
        let wobble = Double(i % 5) - 2
        return [
            RoomTrainingVector(room: "a", time: Double(i), levels: [-60 + wobble, -85 - wobble]),
            RoomTrainingVector(room: "b", time: Double(i), levels: [-85 + wobble, -60 - wobble]),
        ]
    }

    static func sighting(_ gateway: String, _ rssi: Double, at time: Double) -> RoomSighting {
        RoomSighting(gatewayID: gateway, beaconID: "tag", time: time, rssi: rssi, rawRSSI: rssi)
    }

    @Test func itPicksTheObviousRoomFollowsAMajorityOfThreeSecondsAndGoesAway() {
        var rule = RoomNearestFingerprints(gatewayIDs: ["gw-a", "gw-b"], vectors: Self.vectors, awayTimeout: 20)
        var changes: [RoomChange] = []
        // Seconds 1-5 near a's fingerprint, 6-12 near b's, then silence.
        for second in 1...12 {
            let t = Double(second)
            let (a, b) = second <= 5 ? (-61.0, -84.0) : (-83.0, -62.0)
            changes += rule.process(Self.sighting("gw-a", a, at: t - 0.5))
            changes += rule.process(Self.sighting("gw-b", b, at: t - 0.4))
            changes += rule.advance(to: t)
            if second == 1 { #expect(rule.room(of: "tag") == .some("a")) }
            // One second of b's votes is not a majority of the last three; two are.
            if second == 6 { #expect(rule.room(of: "tag") == .some("a")) }
            if second == 7 { #expect(rule.room(of: "tag") == .some("b")) }
        }
        #expect(changes.map(\.to) == ["a", "b"])
        #expect(changes.map(\.hadRoom) == [false, true])
        // Away after the timeout since the last sighting (11.6 s).
        for second in 13...40 { changes += rule.advance(to: Double(second)) }
        #expect(changes.count == 3)
        #expect(changes.last?.to == nil && changes.last?.time == 32)
        #expect(rule.room(of: "tag") == .some(nil))
    }

    @Test func aGatewayNotHeardCountsAsMissingAndTiesGoToTheNearestVector() {
        let rule = RoomNearestFingerprints(gatewayIDs: ["gw-a", "gw-b"], vectors: Self.vectors, awayTimeout: 60)
        // Only gw-a heard, loud: a's vectors are nearer than b's even with gw-b at −100.
        #expect(rule.vote([-60, RoomTrainingRun.missingLevel]) == "a")
        // k = 2 with one vector of each room at the same distance order: the nearest wins the tie.
        let pair = RoomNearestFingerprints(
            gatewayIDs: ["gw"],
            vectors: [
                RoomTrainingVector(room: "x", time: 0, levels: [-70]),
                RoomTrainingVector(room: "y", time: 0, levels: [-74]),
                RoomTrainingVector(room: "y", time: 0, levels: [-90]),
            ], awayTimeout: 60, k: 2)
        #expect(pair.vote([-71]) == "x")
        #expect(pair.vote([-73]) == "y")
        // Vectors of another site's size are ignored; none left: no vote.
        let none = RoomNearestFingerprints(
            gatewayIDs: ["gw-a", "gw-b", "gw-c"], vectors: Self.vectors, awayTimeout: 60)
        #expect(none.vote([-60, -60, -60]) == nil)
    }

    @Test func levelsAreCalibratedWithTheSolveInForce() {
        let steps = [
            RoomCalibrationRun.Step(time: 5, offsets: ["gw-a": 20, "gw-b": 0], maxError: 0)
        ]
        var rule = RoomNearestFingerprints(
            gatewayIDs: ["gw-a", "gw-b"], vectors: Self.vectors, steps: steps, awayTimeout: 60)
        // Read −62 / −75: without offsets that is a; after the solve (gw-a reads 20 dB loud) it is −82 / −75: b.
        _ = rule.process(Self.sighting("gw-a", -62, at: 0.5))
        _ = rule.process(Self.sighting("gw-b", -75, at: 0.6))
        _ = rule.advance(to: 1)
        #expect(rule.room(of: "tag") == .some("a"))
        for second in 6...9 {
            _ = rule.process(Self.sighting("gw-a", -62, at: Double(second) - 0.5))
            _ = rule.process(Self.sighting("gw-b", -75, at: Double(second) - 0.4))
            _ = rule.advance(to: Double(second))
        }
        #expect(rule.room(of: "tag") == .some("b"))
    }
}
