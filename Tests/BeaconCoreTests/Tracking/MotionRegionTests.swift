import Testing

@testable import BeaconModel
@testable import BeaconTracking

/// Motion-aware evidence (issue 30; docs/tracking-and-regions.md, "Motion"): a beacon that reports it moves
/// (BTHome `moving` / `motion`, a Ruuvi `movement_counter` that steps) weighs its region evidence twice, one that
/// reports rest half; a beacon that reports nothing of its motion weighs as before. The hall's enter level is
/// -70 dBm; each test settles the pair `outside`, then feeds reports 5 dB above the level (slow path only: the
/// plain rule enters after 19.9 s, TwoSpeedRegionTests).
@Suite struct MotionRegionTests {
    typealias F = EngineFixtures

    /// Seconds from the first report at -65 dBm to the enter, each report with `fields(index)`.
    static func enterTime(fields: (Int) -> [String: FieldValue]) -> Double? {
        var engine = TwoSpeedRegionTests.settledOutside(F.hall)
        var events: [EngineEvent] = []
        for index in 0..<1_200 {
            let t = 10 + Double(index) * 0.1
            events += engine.advance(to: F.t0 + t)
            events += engine.process(F.report(1, at: t, rssi: -65, fields: fields(index)))
        }
        return F.regionEvents(events).first { $0.kind == .enter }.map { $0.time - F.t0 - 10 }
    }

    @Test func aMovingBeaconDecidesTwiceAsFastAndARestingOneHalfAsFast() throws {
        let plain = try #require(Self.enterTime { _ in [:] })
        let moving = try #require(Self.enterTime { _ in ["moving": .bool(true)] })
        let resting = try #require(Self.enterTime { _ in ["moving": .bool(false)] })
        #expect(plain >= 19.8 && plain <= 20.05, "plain \(plain)")
        #expect(moving >= 9.8 && moving <= 10.1, "moving \(moving)")
        #expect(resting >= 39.7 && resting <= 40.1, "resting \(resting)")
        // A Ruuvi counter that steps every second moves it (from its first step at 1 s: the first value says
        // nothing, the next nine unchanged ones rest it, so it is up to 1 s behind); one that stays still rests it.
        let stepping = try #require(Self.enterTime { ["movement_counter": .int(Int64($0 / 10))] })
        let still = try #require(Self.enterTime { _ in ["movement_counter": .int(66)] })
        #expect(stepping > moving && stepping - moving < 1, "stepping \(stepping)")
        #expect(abs(still - resting) < 0.3, "still \(still)")
    }

    @Test func movementHoldsForTenSecondsThenSettlesForAMinuteThenRests() {
        var state = MotionState()
        #expect(state.weight(fields: [:], previous: [:], at: 0) == 1)
        // A counter's first value says nothing.
        #expect(state.weight(fields: ["movement_counter": .int(3)], previous: [:], at: 1) == 1)
        let previous: [String: FieldValue] = ["movement_counter": .int(3)]
        #expect(state.weight(fields: ["movement_counter": .int(4)], previous: previous, at: 2) == 2)
        #expect(
            state.weight(fields: ["movement_counter": .int(4)], previous: ["movement_counter": .int(4)], at: 11.9) == 2)
        // Put down: the plain weight while it settles at its new spot (12 s to 72 s), then rest.
        let unchanged: [String: FieldValue] = ["movement_counter": .int(4)]
        #expect(state.weight(fields: unchanged, previous: unchanged, at: 12) == 1)
        #expect(state.weight(fields: [:], previous: [:], at: 30) == 1)
        #expect(state.weight(fields: unchanged, previous: unchanged, at: 71.9) == 1)
        #expect(state.weight(fields: unchanged, previous: unchanged, at: 72) == 0.5)
        // Once it reported motion, a report without motion fields (another frame type) still counts as rest.
        #expect(state.weight(fields: [:], previous: [:], at: 73) == 0.5)
        // A BTHome tag that only ever said it rests never settles: it rests from the start.
        var still = MotionState()
        #expect(still.weight(fields: ["moving": .bool(false)], previous: [:], at: 0) == 0.5)
    }
}
