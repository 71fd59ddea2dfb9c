import Testing
@testable import BeaconCore

@Suite struct RegionEngineTests {
    typealias F = EngineFixtures

    @Test func entersOnEvidenceAfterTheMinimumDwellAndExitsAfterTheExitPeriod() {
        var engine = F.engine()
        // −60 dBm against a −70 dBm level: 10 dB a report, 120 dB reached at the 12th report (1.1 s), past the 1 s dwell.
        let events = F.feed(&engine, from: 0, to: 4.95, rssi: -60)
        let enters = F.regionEvents(events).filter { $0.kind == .enter }
        #expect(enters.count == 1)
        #expect(abs(enters[0].time - (F.t0 + 1.1)) < 0.01)
        #expect(enters[0].beacon?.beaconID == F.id(1))
        // Silent from t = 4.9: exit at 34.9 (compared with a little slack: times near 1.7e9 s carry ~2e-7 s of rounding).
        #expect(F.regionEvents(engine.advance(to: F.t0 + 34.8)).isEmpty)
        let exits = F.regionEvents(engine.advance(to: F.t0 + 34.91))
        #expect(exits.map(\.kind) == [.exit])
        #expect(exits.first?.state == .outside)
    }

    @Test func theMinimumDwellHoldsBackAnOverwhelmingSignal() {
        var engine = F.engine(regions: [RegionRule(name: "hall", match: .iBeacon(uuid: F.uuid), enter: .rssi(-70), minDwell: 2)])
        let events = F.feed(&engine, from: 0, to: 3, rssi: -20)
        let enter = F.regionEvents(events).first { $0.kind == .enter }
        #expect(abs(enter!.time - (F.t0 + 2)) < 0.01)
    }

    @Test func unknownUntilEvidenceOfOutside() {
        var engine = F.engine()
        _ = engine.process(F.report(1, at: 0, rssi: -75))
        #expect(engine.state(of: F.id(1), in: "hall") == .unknown)
        _ = F.feed(&engine, from: 0.1, to: 3, rssi: -80)
        #expect(engine.state(of: F.id(1), in: "hall") == .outside)
    }

    @Test func distanceConditionsUseTheInvertedModel() {
        let desk = RegionRule(name: "desk", match: .iBeacon(uuid: F.uuid), enter: .distance(2))
        var engine = F.engine(regions: [desk])
        // 2 m ≈ −67.1 dBm and the derived exit 3 m ≈ −71.9 dBm (n = 2.7, −59 @ 1 m).
        let level = RegionEvaluator.rssiLevel(forDistance: 2, estimator: F.distance, measuredPower: -59, format: "ibeacon")!
        #expect(abs(level - -67.128) < 0.01)
        _ = F.feed(&engine, from: 0, to: 10, rssi: -69)
        #expect(engine.state(of: F.id(1), in: "desk") == .outside)
        _ = F.feed(&engine, from: 10, to: 20, rssi: -63)
        #expect(engine.state(of: F.id(1), in: "desk") == .inside)
        // Inside the hysteresis band (−69 dBm, between 2 m and 3 m) the beacon keeps qualifying: no exit.
        _ = F.feed(&engine, from: 20, to: 120, rssi: -69)
        #expect(engine.state(of: F.id(1), in: "desk") == .inside)
        let events = F.feed(&engine, from: 120, to: 160, rssi: -80)
        #expect(F.regionEvents(events).map(\.kind) == [.exit])
    }

    @Test func regionWithoutConditionEntersOnSightingsEvenWithoutRSSI() {
        let anywhere = RegionRule(name: "heard", match: RegionMatch(format: "ibeacon"), minDwell: 0)
        var engine = F.engine(regions: [anywhere])
        let events = engine.process(F.report(1, at: 0, rssi: nil))
        #expect(F.regionEvents(events).map(\.kind) == [.enter])
        #expect(F.regionEvents(F.feed(&engine, from: 1, to: 20, step: 5, rssi: nil)).isEmpty)
        // Last sighting at t = 16: exit 30 s later.
        #expect(F.regionEvents(engine.advance(to: F.t0 + 45.9)).isEmpty)
        #expect(F.regionEvents(engine.advance(to: F.t0 + 46.01)).map(\.kind) == [.exit])
    }

    @Test func regionFilterOverrideJudgesTheSmoothedSignal() {
        var rule = F.hall
        rule.filter = FilterSettings(kind: .runningAverage, window: 5)
        var engine = F.engine(regions: [rule])
        // Alternating −40/−100: raw evidence would enter (mean −70 plus outliers above); the 5 s average sits at −70.
        var t = 0.0
        var events: [EngineEvent] = []
        for index in 0..<300 {
            events += engine.process(F.report(1, at: t, rssi: index.isMultiple(of: 2) ? -40 : -100))
            t += 0.1
        }
        #expect(F.regionEvents(events).isEmpty)
    }

    @Test func stateSnapshotListsEveryPairIncludingUnknownAndOutside() {
        let other = RegionRule(name: "lab", match: .iBeacon(uuid: F.uuid, major: 1, minor: 2), enter: .rssi(-60))
        var engine = F.engine(regions: [F.hall, other])
        _ = F.feed(&engine, minor: 1, from: 0, to: 3, rssi: -50)
        _ = engine.process(F.report(2, at: 3, rssi: -75))
        let snapshot = F.regionEvents(engine.stateSnapshot(at: F.t0 + 3))
        #expect(snapshot.map { "\($0.kind) \($0.region) \($0.beaconID.suffix(1)) \($0.state)" } == [
            "state hall 1 inside", "state hall 2 unknown", "state lab 2 unknown",
        ])
        #expect(snapshot.allSatisfy { $0.time == F.t0 + 3 && $0.beacon != nil })
    }

    @Test func stateChangesAreHandedOutOnceAndRefreshedWhileInside() {
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 2, rssi: -50)
        let first = engine.takeStateChanges()
        #expect(first.map(\.state) == [.inside])
        #expect(first.first?.region == "hall")
        #expect(engine.takeStateChanges().isEmpty)
        _ = F.feed(&engine, from: 2, to: 25, rssi: -50)
        let refreshed = engine.takeStateChanges()
        #expect(refreshed.count == 1)
        #expect(refreshed.first!.updated >= F.t0 + 21)
        #expect(refreshed.first!.since == first.first!.since)
    }

    @Test func restoredInsideStaysInsideWithoutEvents() throws {
        let store = InMemoryRegionStateStore()
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 100, rssi: -55)
        try store.saveRegionStates(engine.takeStateChanges())
        // Restart 60 s later: the beacon is back at once.
        var restarted = F.engine(restoring: try store.loadRegionStates(), now: 160)
        #expect(restarted.state(of: F.id(1), in: "hall") == .inside)
        let events = F.feed(&restarted, from: 160, to: 300, rssi: -55)
        #expect(F.regionEvents(events).isEmpty)
        #expect(F.presenceEvents(events).isEmpty)
        #expect(F.sightings(events).count > 0)
    }

    @Test func restoredInsideExitsWhenTheBeaconNeverReturns() throws {
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 10, rssi: -55)
        let rows = engine.takeStateChanges()
        var restarted = F.engine(restoring: rows, now: 20)
        // The exit period restarts at the restore time (nothing could be heard while down).
        #expect(F.regionEvents(restarted.advance(to: F.t0 + 49.9)).isEmpty)
        let events = restarted.advance(to: F.t0 + 50)
        let exit = F.regionEvents(events)
        #expect(exit.map(\.kind) == [.exit])
        #expect(exit.first?.beacon == nil, "not sighted since the restart: no snapshot")
        #expect(F.presenceEvents(restarted.advance(to: F.t0 + 80)).map(\.state) == [.away])
    }

    @Test func staleOrUnknownRegionRowsAreNotRestored() {
        let rows = [
            PersistedRegionState(region: "hall", beaconID: F.id(1), state: .inside, since: F.t0, lastQualifying: F.t0,
                                 updated: F.t0),
            PersistedRegionState(region: "gone", beaconID: F.id(2), state: .inside, since: F.t0 + 500,
                                 lastQualifying: F.t0 + 500, updated: F.t0 + 500),
            PersistedRegionState(region: "hall", beaconID: F.id(3), state: .inside, since: .nan,
                                 lastQualifying: F.t0 + 890, updated: F.t0 + 890),
        ]
        var engine = F.engine(restoring: rows, now: 901)
        #expect(engine.trackedCount == 0)
        let events = F.feed(&engine, from: 901, to: 905, rssi: -50)
        #expect(F.regionEvents(events).map(\.kind) == [.enter], "a stale row means a fresh start")
    }

    @Test func reloadKeepsStateOfRegionsWhoseNamesStay() {
        var engine = F.engine(regions: [F.hall, RegionRule(name: "old", match: RegionMatch(), enter: .rssi(-80))])
        _ = F.feed(&engine, from: 0, to: 3, rssi: -50)
        #expect(engine.state(of: F.id(1), in: "old") == .inside)
        var tightened = F.hall
        tightened.exitPeriod = 10
        let added = RegionRule(name: "new", match: .iBeacon(uuid: F.uuid, major: 1), enter: .rssi(-55))
        let events = engine.reload(regions: [added, tightened], settings: TrackerSettings(filter: .medianIQR), now: F.t0 + 3)
        #expect(events.isEmpty)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        #expect(engine.state(of: F.id(1), in: "new") == .unknown)
        #expect(engine.state(of: F.id(1), in: "old") == nil)
        #expect(engine.snapshot(of: F.id(1), at: F.t0 + 3)?.smoothedRSSI == nil, "filter kind changed: restarted")
        let after = F.feed(&engine, from: 3, to: 5.95, rssi: -50)
        #expect(F.regionEvents(after).map { "\($0.kind) \($0.region)" } == ["enter new"])
        // The new exit period (10 s) applies to the kept state; "new" keeps the default 30 s.
        #expect(F.regionEvents(engine.advance(to: F.t0 + 15.95)).map { "\($0.kind) \($0.region)" } == ["exit hall"])
        #expect(F.regionEvents(engine.advance(to: F.t0 + 35.95)).map { "\($0.kind) \($0.region)" } == ["exit new"])
    }

    @Test func reloadWithASmallerCapEvictsTheStalest() {
        var engine = F.engine()
        for minor in 1...5 { _ = engine.process(F.report(minor, at: Double(minor), rssi: -90)) }
        let events = engine.reload(regions: [F.hall], settings: TrackerSettings(maxBeacons: 2), now: F.t0 + 6)
        #expect(engine.trackedCount == 2)
        #expect(F.presenceEvents(events).map { $0.beacon.beaconID } == [F.id(1), F.id(2), F.id(3)])
    }

    @Test func overdueTimeoutsFireOnTheNextReportWhenAdvanceWasNotCalled() {
        var engine = F.engine()
        var t = 0.0
        while t < 3 { _ = engine.process(F.report(1, at: t, rssi: -50)); t += 0.1 }
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        // 70 s of silence and nobody called advance: the next report first settles what was due.
        let events = engine.process(F.report(1, at: 73, rssi: -50))
        let kinds = events.map { event -> String in
            switch event {
            case let .region(region): "\(region.kind)"
            case let .presence(presence): "\(presence.state)"
            case .sighting: "sighting"
            }
        }
        #expect(kinds == ["exit", "away", "seen", "sighting"])
    }

    @Test func aNameArrivingLaterMatchesNamePatternRegions() {
        let tiles = RegionRule(name: "tiles", match: RegionMatch(namePattern: "Tile*"), enter: .rssi(-70))
        var engine = F.engine(regions: [tiles])
        _ = F.feed(&engine, from: 0, to: 2, rssi: -50)
        #expect(engine.state(of: F.id(1), in: "tiles") == nil, "no name yet: no match")
        var events: [EngineEvent] = []
        var t = 2.0
        while t < 5 {
            events += engine.process(F.report(1, at: t, rssi: -50, name: "Tile Mate"))
            t += 0.1
        }
        #expect(F.regionEvents(events).map { "\($0.kind) \($0.region)" } == ["enter tiles"])
    }

    @Test func storeUpsertsAndDeletes() throws {
        let store = InMemoryRegionStateStore()
        let row = PersistedRegionState(region: "a", beaconID: "b", state: .inside, since: 1, lastQualifying: 2, updated: 3)
        try store.saveRegionStates([row, row])
        var changed = row
        changed.state = .outside
        try store.saveRegionStates([changed])
        #expect(try store.loadRegionStates() == [changed])
        try store.deleteRegionStates([(region: "a", beaconID: "b")])
        #expect(try store.loadRegionStates().isEmpty)
    }
}
