import BeaconSimulation
import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import BeaconTracking

/// Away that fits the device: each beacon's interval and habitual silences are learned, and a silence that is
/// usual for it holds it `stale` (regions held) instead of `away` (issue 30).
@Suite struct DeviceSilenceTests {
    typealias F = EngineFixtures

    @Test func bucketsAreHalfOctavesFromFiftyMilliseconds() {
        #expect(SilenceProfile.bucket(of: 0.01) == 0)
        #expect(SilenceProfile.bucket(of: 0.05) == 0)
        #expect(SilenceProfile.bucket(of: 0.07) == 0)
        #expect(SilenceProfile.bucket(of: 0.071) == 1)  // 0.05 * sqrt(2) = 0.0707
        #expect(SilenceProfile.bucket(of: 0.1) == 2)
        #expect(SilenceProfile.bucket(of: 1) == 8)  // 0.8 ..< 1.13
        #expect(SilenceProfile.bucket(of: 180) == 23)  // 144.8 ..< 204.8
        #expect(SilenceProfile.bucket(of: 1e9) == SilenceProfile.bucketCount - 1)
        #expect(SilenceProfile.bucket(of: .infinity) == SilenceProfile.bucketCount - 1)
        #expect(abs(SilenceProfile.lowerEdge(24) - 204.8) < 1e-9)
        #expect(abs(SilenceProfile.lowerEdge(9) - 0.05 * 16 * 1.414_213_562_373_095) < 1e-9)
    }

    @Test func learnsTheIntervalAndOnlyRecurringSilences() {
        var profile = SilenceProfile()
        var t = 0.0
        for _ in 0..<7 {
            t += 1
            profile.record(gap: 1, at: t)
        }
        #expect(profile.interval == nil, "seven gaps are too few to state an interval")
        profile.record(gap: 0, at: t)
        profile.record(gap: -3, at: t)
        profile.record(gap: .nan, at: t)
        #expect(profile.gaps == 7, "zero, negative and NaN gaps are not recorded")
        t += 180
        profile.record(gap: 180, at: t)
        let interval = profile.interval ?? 0
        #expect(interval > 0.8 && interval < 1.14, "median gap of a 1 Hz beacon: \(interval)")
        #expect(profile.usualSilence.map { $0 < 2 } == true, "one 3-minute silence is not a habit")
        t += 180
        profile.record(gap: 180, at: t)
        #expect(profile.usualSilence.map { abs($0 - 204.8) < 1e-6 } == true, "twice is: \(profile.usualSilence ?? -1)")
    }

    @Test func countsHalveAfterTheDecayPeriodSoAHabitIsForgotten() {
        var profile = SilenceProfile()
        for step in 0..<20 { profile.record(gap: 1, at: Double(step)) }
        profile.record(gap: 180, at: 200)
        profile.record(gap: 180, at: 400)
        #expect(profile.usualSilence.map { $0 > 200 } == true)
        // Seven hours on: the counts halve (2 -> 1) and the habit no longer counts.
        profile.record(gap: 1, at: 400 + 7 * 3_600)
        #expect(profile.usualSilence.map { $0 < 2 } == true)
    }

    /// A 10 Hz tag losing about one report in ten, for two hours: its one- and two-interval gaps soon fill
    /// their buckets, and the interval stated must stay the tag's, not drift to twice it.
    @Test func aLossyTenHertzTagKeepsItsIntervalForHours() {
        var profile = SilenceProfile()
        var random = SimulationRandom(seed: 10)
        var t = 0.0
        var checked = 0
        for report in 0..<72_000 {
            var gap = 0.1 + Double.random(in: 0..<0.01, using: &random)  // advDelay, 0-10 ms
            while Double.random(in: 0..<1, using: &random) < 0.1 { gap += 0.1 }  // lost reports
            t += gap
            profile.record(gap: gap, at: t)
            if report >= 100, report % 6_000 == 0, let interval = profile.interval {
                #expect(interval > 0.09 && interval < 0.125, "interval after \(Int(t)) s: \(interval)")
                checked += 1
            }
        }
        #expect(checked == 11)
        #expect(profile.gaps == 255, "the gap count saturates")
        #expect(profile.usualSilence.map { $0 < 1 } == true, "no silence is usual for a tag that never went quiet")
    }

    @Test func aProfileStaysSmallEnoughForEveryTrackedBeacon() {
        #expect(MemoryLayout<SilenceProfile>.stride <= 32)
    }

    /// A 1 Hz phone inside `hall` that falls silent for 180 s twice and comes back.
    private func phoneWithTwoSilences(_ engine: inout RegionEngine) -> (events: [EngineEvent], end: Double) {
        var events = F.feed(&engine, from: 0, to: 30, step: 1, rssi: -50)
        events += F.feed(&engine, from: 210, to: 240, step: 1, rssi: -50)
        events += F.feed(&engine, from: 420, to: 450, step: 1, rssi: -50)
        return (events, 449)
    }

    @Test func aHabituallyQuietPhoneIsStaleNotAwayAndKeepsItsRegion() {
        var engine = F.engine()
        let learning = phoneWithTwoSilences(&engine)
        let learningStates = F.presenceEvents(learning.events).map(\.state)
        // The first two silences teach it (the second is not yet held: one silence is not a habit).
        #expect(learningStates == [.seen, .away, .seen, .away, .seen], "\(learningStates)")
        #expect(F.regionEvents(learning.events).map(\.kind) == [.enter, .exit, .enter, .exit, .enter])

        // The third silence of 180 s: stale after the gateway's 60 s, regions held, back without an exit.
        let last = learning.end
        var quiet: [EngineEvent] = []
        var t = last + 1
        while t < last + 180 {
            quiet += engine.advance(to: F.t0 + t)
            t += 1
        }
        let stale = F.presenceEvents(quiet)
        #expect(stale.map(\.state) == [.stale])
        #expect(stale.first.map { $0.time - F.t0 } == last + 60)
        let awayAfter = stale.first?.awayAfter ?? 0
        #expect(abs(awayAfter - 1.5 * 204.8) < 1e-6, "held for 1.5 times the habitual silence: \(awayAfter)")
        #expect(F.regionEvents(quiet).isEmpty, "no exit while the silence is usual for the phone")
        #expect(engine.silenceCounts == (stale: 1, held: 1))
        let back = engine.process(F.report(1, at: last + 180, rssi: -50))
        #expect(F.presenceEvents(back).map(\.state) == [.seen])
        #expect(F.regionEvents(back).isEmpty)
    }

    @Test func aSilenceLongerThanTheHoldEndsInAwayAndExit() {
        var engine = F.engine()
        let last = phoneWithTwoSilences(&engine).end
        let awayAt = last + 1.5 * 204.8
        var events: [EngineEvent] = []
        for t in stride(from: last + 1, through: last + 400, by: 1) { events += engine.advance(to: F.t0 + t) }
        let presence = F.presenceEvents(events)
        #expect(presence.map(\.state) == [.stale, .away])
        let exits = F.regionEvents(events)
        #expect(exits.map(\.kind) == [.exit])
        #expect(exits.first.map { abs(($0.time - F.t0) - awayAt.rounded(.up)) < 1e-6 } == true)
        #expect(presence.last.map { abs(($0.time - F.t0) - awayAt.rounded(.up)) < 1e-6 } == true)
    }

    @Test func aSingleSilenceIsNotHeldAndTheLearningCanBeTurnedOff() {
        var once = F.engine()
        var events = F.feed(&once, from: 0, to: 30, step: 1, rssi: -50)
        events += F.feed(&once, from: 210, to: 240, step: 1, rssi: -50)
        events += once.advance(to: F.t0 + 239 + 60)
        #expect(F.presenceEvents(events).map(\.state) == [.seen, .away, .seen, .away])

        var settings = TrackerSettings()
        settings.staleMax = 0
        var off = F.engine(settings: settings)
        let learned = phoneWithTwoSilences(&off)
        #expect(!F.presenceEvents(learned.events).map(\.state).contains(.stale))
        let later = F.presenceEvents(off.advance(to: F.t0 + learned.end + 60))
        #expect(later.map(\.state) == [.away], "with stale_max_s 0 the gateway's away timeout holds")
    }

    @Test func aConfiguredPhoneIsStaleFromTheGatewayTimeoutToItsOwn() {
        var settings = TrackerSettings()
        settings.awayTimeoutOverrides = [F.id(1): 600]
        var engine = F.engine(settings: settings)
        var events = F.feed(&engine, from: 0, to: 30, step: 1, rssi: -50)
        #expect(F.regionEvents(events).map(\.kind) == [.enter])
        events = []
        for t in stride(from: 30.0, through: 700, by: 1) { events += engine.advance(to: F.t0 + t) }
        let presence = F.presenceEvents(events)
        #expect(presence.map(\.state) == [.stale, .away])
        #expect(presence.map { $0.time - F.t0 } == [89, 629])
        #expect(engine.silenceCounts == (stale: 0, held: 1), "away now, but its configured timeout still holds")
        #expect(F.regionEvents(events).map { $0.time - F.t0 } == [629], "the region is held until away")
    }

    @Test func aFastTagStatesItsIntervalAndTheGatewayTimeout() {
        var engine = F.engine(regions: [])
        _ = F.feed(&engine, from: 0, to: 5, step: 0.1, rssi: -60)
        let away = F.presenceEvents(engine.advance(to: F.t0 + 5 + 60))
        #expect(away.map(\.state) == [.away])
        let interval = away.first?.interval ?? 0
        #expect(interval > 0.07 && interval < 0.15, "10 Hz: \(interval)")
        #expect(away.first?.awayAfter == 60)
    }

    @Test func thePresencePayloadCarriesTheLearnedFigures() throws {
        var engine = F.engine(regions: [])
        _ = F.feed(&engine, from: 0, to: 5, step: 0.125, rssi: -60)
        let snapshot = engine.presenceSnapshot(at: F.t0 + 5)
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: "gw1"),
            sequences: SequenceBlock(first: 1, end: 100))
        let payload = try #require(try encoder.encode(snapshot).first).payload
        #expect(payload.contains("\"state\":\"seen\""))
        #expect(payload.contains("\"interval_s\":0.12"), "\(payload)")
        #expect(payload.contains("\"away_after_s\":60"), "\(payload)")
    }

    @Test func staleMaxIsReadAndChecked() {
        var settings = TrackerSettings()
        settings.staleMax = -1
        #expect(settings.validate().map(\.path) == ["tracker.stale_max_s"])
        settings.staleMax = 86_401
        #expect(settings.validate().map(\.path) == ["tracker.stale_max_s"])
        settings.staleMax = 0
        #expect(settings.validate().isEmpty)
    }
}
