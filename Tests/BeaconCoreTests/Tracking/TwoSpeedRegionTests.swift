import Testing

@testable import BeaconModel
@testable import BeaconTracking

/// The region rule's two speeds (issue 30): strong, consistent evidence enters in seconds; weak evidence near
/// the level still takes the slow sum's time; one loud report decides nothing. The hall's enter level is
/// -70 dBm. Each test first settles the pair `outside` (10 s at -90 dBm), then feeds its reports from t = 10 s;
/// times are seconds after that.
@Suite struct TwoSpeedRegionTests {
    typealias F = EngineFixtures

    static func settledOutside(_ rule: RegionRule) -> RegionEngine {
        var engine = F.engine(regions: [rule])
        // To 9.95 s: the last settling report is at 9.9 s, so the first test report (10 s) stands for 0.1 s.
        let events = F.regionEvents(F.feed(&engine, from: 0, to: 9.95, rssi: -90))
        #expect(events.map(\.kind) == [.state] && engine.state(of: F.id(1), in: rule.name) == .outside)
        return engine
    }

    static func enterTime(_ rule: RegionRule, rssi: Int, step: Double = 0.1, until: Double = 120) -> Double? {
        var engine = settledOutside(rule)
        let events = F.regionEvents(F.feed(&engine, from: 10, to: until, step: step, rssi: rssi))
        return events.first { $0.kind == .enter }.map { $0.time - F.t0 - 10 }
    }

    @Test func strongEvidenceEntersInSeconds() throws {
        // 12 dB above the level: the margin counts at most 11 dB, 5 dB above the fast margin of 6: 0.5 dB·s a
        // report reaches the 10 dB·s with the 20th report, at 1.9 s.
        let fast = try #require(Self.enterTime(F.hall, rssi: -58))
        #expect(fast >= 1.8 && fast <= 2.05, "entered at \(fast)")
        var slowOnly = F.hall
        slowOnly.fastEnterEvidence = 0
        // The slow sum alone: (11 − 3.5) dB × 0.1 s a report reaches 30 dB·s with the 40th, at 3.9 s.
        let slow = try #require(Self.enterTime(slowOnly, rssi: -58))
        #expect(slow >= 3.8 && slow <= 4.05, "entered at \(slow)")
    }

    @Test func weakEvidenceNearTheLevelDecidesSlowly() throws {
        // 5 dB above the level: below the fast margin, so only the slow sum counts: (5 − 3.5) × 0.1 a report
        // reaches 30 with the 200th report, at 19.9 s.
        let time = try #require(Self.enterTime(F.hall, rssi: -65))
        #expect(time >= 19.8 && time <= 20.05, "entered at \(time)")
    }

    @Test func fastPathNeedsSeveralReports() throws {
        // Reports 2 s apart, 8 dB above the level: the first (0.1 s after the settling reports) adds 0.2 dB·s of
        // strong evidence, each later one 2 (a report stands for at most 1 s). With 2 dB·s needed the second
        // report (t = 2 s) has enough, but the run must hold five reports: the fifth (t = 8 s) enters. The slow
        // sum has 0.45 + 4 × 4.5 = 18.45 dB·s then, short of 30.
        var rule = F.hall
        rule.fastEnterEvidence = 2
        let time = try #require(Self.enterTime(rule, rssi: -62, step: 2))
        #expect(abs(time - 8) < 0.01, "entered at \(time)")
    }

    @Test func fastPathKeepsTheMinimumDwell() throws {
        // 12 dB above with a 5 s dwell: the strong evidence is there at 1.9 s, the run started at 9.9 s (the
        // first report stands for 0.1 s), so the enter waits for 14.9 s: 4.9 s after the test reports begin.
        var rule = F.hall
        rule.minDwell = 5
        let time = try #require(Self.enterTime(rule, rssi: -58))
        #expect(time >= 4.85 && time <= 5.0, "entered at \(time)")
    }

    @Test func inconsistentReportsDoNotTakeTheFastPath() {
        // Alternating 12 dB above and at the level: the fast sum gains 0.5 and loses 0.6 dB·s per pair of
        // reports (back to 0), the slow sum gains (11 − 3.5 − 3.5) × 0.1 = 0.4 dB·s per pair: it enters by the
        // slow path after 75 pairs, at about 15 s.
        var engine = Self.settledOutside(F.hall)
        var events: [EngineEvent] = []
        var index = 0
        while index < 400 {
            let t = 10 + Double(index) * 0.1
            events += engine.process(F.report(1, at: t, rssi: index % 2 == 0 ? -58 : -70))
            index += 1
        }
        let enter = F.regionEvents(events).first { $0.kind == .enter }.map { $0.time - F.t0 - 10 }
        #expect(enter.map { $0 >= 14.5 && $0 <= 15.5 } == true, "entered at \(String(describing: enter))")
    }

    @Test func presetsMapToTheirParameterSets() {
        var rule = F.hall
        rule.apply(.steady)
        #expect(rule.fastEnterEvidence == 0 && rule.enterEvidence == 60 && rule.sensitivity == .steady)
        rule.apply(.fast)
        #expect(rule.fastEnterEvidence == 6 && rule.fastEnterMargin == 4 && rule.exitPeriod == 20)
        // The rule's defaults are the balanced preset's.
        var balanced = RegionRule(name: "b", match: RegionMatch())
        let defaults = balanced
        balanced.apply(.balanced)
        balanced.sensitivity = nil
        #expect(balanced == defaults)
        // Steady never takes the fast path: 12 dB above enters by the slow sum, 0.75 dB·s a report reaching 60
        // with the 80th, at 7.9 s.
        var steady = F.hall
        steady.apply(.steady)
        let time = Self.enterTime(steady, rssi: -58)
        #expect(time.map { $0 >= 7.8 && $0 <= 8.05 } == true, "entered at \(String(describing: time))")
    }
}
