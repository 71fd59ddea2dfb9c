import Testing

@testable import BeaconModel
@testable import BeaconTracking

@Suite struct RegionEngineTests {
    typealias F = EngineFixtures

    @Test func entersOnEvidenceAfterTheMinimumDwellAndExitsAfterTheExitPeriod() {
        var engine = F.engine()
        // −60 dBm against a −70 dBm level, 10 dB above it: strong evidence (issue 30's fast path), (10 − 6) dB for
        // each 0.1 s, 0.4 dB·s a report after the first, reaches the 10 dB·s at the 26th report (2.5 s), past
        // the 1 s dwell and the 5 reports. (The slow sum alone, from `unknown`, margin 3.5 × 0.25 = 0.875 dB,
        // would reach its 30 dB·s at the 34th report, 3.3 s.)
        let events = F.feed(&engine, from: 0, to: 4.95, rssi: -60)
        let enters = F.regionEvents(events).filter { $0.kind == .enter }
        #expect(enters.count == 1)
        #expect(abs(enters[0].time - (F.t0 + 2.5)) < 0.01)
        #expect(enters[0].beacon?.beaconID == F.id(1))
        // Silent from t = 4.9 right after qualifying reports: a dropout, exit after the 60 s grace, at 64.9
        // (compared with a little slack: times near 1.7e9 s carry ~2e-7 s of rounding).
        #expect(F.regionEvents(engine.advance(to: F.t0 + 64.8)).isEmpty)
        let exits = F.regionEvents(engine.advance(to: F.t0 + 64.91))
        #expect(exits.map(\.kind) == [.exit])
        #expect(exits.first?.state == .outside)
    }

    @Test func heardBelowTheExitLevelExitsAfterTheExitPeriod() {
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 10, rssi: -60)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        // −80 dBm, 5 dB below the exit level (−75): the first report after t = 9.9 no longer qualifies; 30 s
        // heard without qualifying ends the stay at 39.9.
        let early = F.feed(&engine, from: 10, to: 39.8, rssi: -80)
        #expect(F.regionEvents(early).isEmpty)
        let late = F.feed(&engine, from: 39.8, to: 41, rssi: -80)
        let exit = F.regionEvents(late)
        #expect(exit.map(\.kind) == [.exit])
        #expect(abs((exit.first?.time ?? 0) - (F.t0 + 39.9)) < 0.15)
    }

    @Test func aDipRepaysItsBoundedDebtAtOnce() {
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 10, rssi: -60)
        // 25 s far below the exit level (a body in the way): the debt stops at 20 dB·s; the good reports after it
        // qualify again within about a second, and the exit clock starts over.
        _ = F.feed(&engine, from: 10, to: 35, rssi: -95)
        let back = F.feed(&engine, from: 35, to: 120, rssi: -60)
        #expect(F.regionEvents(back).isEmpty)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
    }

    @Test func evidencePerSecondDoesNotDependOnTheAdvertisingRate() {
        // The same margin at 1 and at 10 reports/s enters after the same time (to within one report interval),
        // on the evidence sums. (The fast path also needs 5 reports: at 1 Hz those take 4 s, more than the
        // 2.5 s of strong evidence a 10 Hz beacon 10 dB above needs; TwoSpeedRegionTests covers that.)
        var times: [Double] = []
        var slowOnly = F.hall
        slowOnly.fastEnterEvidence = 0
        for step in [1.0, 0.1] {
            var engine = F.engine(regions: [slowOnly])
            let enter = F.regionEvents(F.feed(&engine, from: 0, to: 20, step: step, rssi: -60)).first {
                $0.kind == .enter
            }
            times.append((enter?.time ?? .infinity) - F.t0)
        }
        #expect(abs(times[0] - times[1]) <= 1.0, "\(times)")
    }

    @Test func theMinimumDwellHoldsBackAnOverwhelmingSignal() {
        var engine = F.engine(regions: [
            RegionRule(name: "hall", match: .iBeacon(uuid: F.uuid), enter: .rssi(-70), minDwell: 6)
        ])
        let events = F.feed(&engine, from: 0, to: 7, rssi: -20)
        let enter = F.regionEvents(events).first { $0.kind == .enter }
        #expect(abs((enter?.time ?? 0) - (F.t0 + 6)) < 0.01)
    }

    @Test func unknownUntilEvidenceOfOutside() {
        var engine = F.engine()
        _ = engine.process(F.report(1, at: 0, rssi: -75))
        #expect(engine.state(of: F.id(1), in: "hall") == .unknown)
        _ = F.feed(&engine, from: 0.1, to: 3, rssi: -80)
        #expect(engine.state(of: F.id(1), in: "hall") == .unknown, "9.125 dB·s a second: 30 not reached yet")
        let events = F.feed(&engine, from: 3, to: 6, rssi: -80)
        #expect(engine.state(of: F.id(1), in: "hall") == .outside)
        // Settling outside is published (a `state` event), so a consumer holding an old retained `inside` hears it.
        #expect(F.regionEvents(events).map { "\($0.kind) \($0.state)" } == ["state outside"])
    }

    @Test func distanceConditionsUseTheInvertedModel() {
        let desk = RegionRule(name: "desk", match: .iBeacon(uuid: F.uuid), enter: .distance(2))
        var engine = F.engine(regions: [desk])
        // 2 m ≈ −67.1 dBm and the derived exit 3 m ≈ −71.9 dBm (n = 2.7, −59 @ 1 m).
        let level = RegionEvaluator.rssiLevel(
            forDistance: 2, estimator: F.distance, measuredPower: -59, format: "ibeacon")!
        #expect(abs(level - -67.128) < 0.01)
        _ = F.feed(&engine, from: 0, to: 10, rssi: -75)
        #expect(engine.state(of: F.id(1), in: "desk") == .outside)
        _ = F.feed(&engine, from: 10, to: 20, rssi: -60)
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

    @Test func stateSnapshotListsKnownPairsButNeverUnknown() {
        let other = RegionRule(name: "lab", match: .iBeacon(uuid: F.uuid, major: 1, minor: 2), enter: .rssi(-60))
        var engine = F.engine(regions: [F.hall, other])
        _ = F.feed(&engine, minor: 1, from: 0, to: 6, rssi: -50)
        _ = F.feed(&engine, minor: 3, from: 0, to: 6, rssi: -90)
        _ = engine.process(F.report(2, at: 6, rssi: -75))
        let snapshot = F.regionEvents(engine.stateSnapshot(at: F.t0 + 6))
        // Beacon 2 is still unknown in both its regions: left out, so no retained state is replaced by `unknown`.
        #expect(
            snapshot.map { "\($0.kind) \($0.region) \($0.beaconID.suffix(1)) \($0.state)" } == [
                "state hall 1 inside", "state hall 3 outside",
            ])
        #expect(snapshot.allSatisfy { $0.time == F.t0 + 6 && $0.beacon != nil })
    }

    @Test func stateChangesAreHandedOutOnceAndRefreshedWhileInside() {
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 6, rssi: -50)
        let first = engine.takeStateChanges()
        #expect(first.map(\.state) == [.inside])
        #expect(first.first?.region == "hall")
        #expect(engine.takeStateChanges().isEmpty)
        _ = F.feed(&engine, from: 6, to: 30, rssi: -50)
        let refreshed = engine.takeStateChanges()
        #expect(refreshed.count == 1)
        // Refreshed at most every 10 s while inside: the last refresh is at most 10 s before the last report (29.9).
        #expect(refreshed.first!.updated >= F.t0 + 19.9)
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
        // The clocks restart at the restore time (nothing could be heard while down); total silence since then
        // is a dropout: exit after the 60 s grace.
        #expect(F.regionEvents(restarted.advance(to: F.t0 + 79.9)).isEmpty)
        let events = restarted.advance(to: F.t0 + 80)
        let exit = F.regionEvents(events)
        #expect(exit.map(\.kind) == [.exit])
        #expect(exit.first?.beacon == nil, "not sighted since the restart: no snapshot")
        #expect(F.presenceEvents(events + restarted.advance(to: F.t0 + 81)).map(\.state) == [.away])
    }

    @Test func downtimeCountsTowardsTheExitPeriodUpToHalfOfIt() throws {
        var engine = F.engine()
        _ = F.feed(&engine, from: 0, to: 10, rssi: -55)
        let rows = engine.takeStateChanges()
        // Restart at 40 s (down for 30 s); the beacon left meanwhile and is heard only weakly (below the exit
        // level) from then on: it exits half an exit period (15 s) after the restart, not a whole one.
        var restarted = F.engine(restoring: rows, now: 40)
        let events = F.feed(&restarted, from: 40, to: 90, rssi: -90)
        let exits = F.regionEvents(events)
        #expect(exits.map(\.kind) == [.exit])
        let at = try #require(exits.first).time - F.t0
        #expect(at >= 54.5 && at <= 56, "exit at \(at) s")
    }

    @Test func staleOrUnknownRegionRowsAreNotRestored() {
        let rows = [
            PersistedRegionState(
                region: "hall", beaconID: F.id(1), state: .inside, since: F.t0, lastQualifying: F.t0,
                updated: F.t0),
            PersistedRegionState(
                region: "gone", beaconID: F.id(2), state: .inside, since: F.t0 + 500,
                lastQualifying: F.t0 + 500, updated: F.t0 + 500),
            PersistedRegionState(
                region: "hall", beaconID: F.id(3), state: .inside, since: .nan,
                lastQualifying: F.t0 + 890, updated: F.t0 + 890),
        ]
        var engine = F.engine(restoring: rows, now: 901)
        #expect(engine.trackedCount == 0)
        let events = F.feed(&engine, from: 901, to: 907, rssi: -50)
        #expect(F.regionEvents(events).map(\.kind) == [.enter], "a stale row means a fresh start")
    }

    @Test func reloadKeepsStateOfRegionsWhoseNamesStay() {
        var engine = F.engine(regions: [F.hall, RegionRule(name: "old", match: RegionMatch(), enter: .rssi(-80))])
        _ = F.feed(&engine, from: 0, to: 6, rssi: -50)
        #expect(engine.state(of: F.id(1), in: "old") == .inside)
        var tightened = F.hall
        tightened.exitPeriod = 10
        let added = RegionRule(name: "new", match: .iBeacon(uuid: F.uuid, major: 1), enter: .rssi(-55))
        let events = engine.reload(
            regions: [added, tightened], settings: TrackerSettings(filter: .medianIQR), now: F.t0 + 6)
        #expect(events.isEmpty)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        #expect(engine.state(of: F.id(1), in: "new") == .unknown)
        #expect(engine.state(of: F.id(1), in: "old") == nil)
        #expect(engine.snapshot(of: F.id(1), at: F.t0 + 6)?.smoothedRSSI == nil, "filter kind changed: restarted")
        let after = F.feed(&engine, from: 6, to: 11.95, rssi: -40)
        #expect(F.regionEvents(after).map { "\($0.kind) \($0.region)" } == ["enter new"])
        // Then heard below both exit levels: the new exit period (10 s) applies to the kept state; "new" keeps
        // the default 30 s.
        let below = F.feed(&engine, from: 11.95, to: 27, rssi: -90)
        #expect(F.regionEvents(below).map { "\($0.kind) \($0.region)" } == ["exit hall"])
        let later = F.feed(&engine, from: 27, to: 45, rssi: -90)
        #expect(F.regionEvents(later).map { "\($0.kind) \($0.region)" } == ["exit new"])
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
        while t < 6 {
            _ = engine.process(F.report(1, at: t, rssi: -50))
            t += 0.1
        }
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        // 70 s of silence (longer than the dropout grace) and nobody called advance: the next report first
        // settles what was due.
        let events = engine.process(F.report(1, at: 76, rssi: -50))
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
        while t < 9 {
            events += engine.process(F.report(1, at: t, rssi: -50, name: "Tile Mate"))
            t += 0.1
        }
        #expect(F.regionEvents(events).map { "\($0.kind) \($0.region)" } == ["enter tiles"])
    }

    @Test func storeUpsertsAndDeletes() throws {
        let store = InMemoryRegionStateStore()
        let row = PersistedRegionState(
            region: "a", beaconID: "b", state: .inside, since: 1, lastQualifying: 2, updated: 3)
        try store.saveRegionStates([row, row])
        var changed = row
        changed.state = .outside
        try store.saveRegionStates([changed])
        #expect(try store.loadRegionStates() == [changed])
        try store.deleteRegionStates([(region: "a", beaconID: "b")])
        #expect(try store.loadRegionStates().isEmpty)
    }
}
