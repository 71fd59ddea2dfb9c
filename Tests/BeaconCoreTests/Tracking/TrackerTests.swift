import Testing

@testable import BeaconModel
@testable import BeaconTracking

@Suite struct TrackerTests {
    typealias F = EngineFixtures

    @Test func evictsTheLeastRecentlySeenBeyondTheCap() {
        var engine = F.engine(settings: TrackerSettings(maxBeacons: 3))
        for minor in 1...3 { _ = engine.process(F.report(minor, at: Double(minor), rssi: -80)) }
        _ = engine.process(F.report(1, at: 4, rssi: -80))  // 1 is now the most recent; 2 the stalest
        let events = engine.process(F.report(4, at: 5, rssi: -80))
        #expect(engine.trackedCount == 3)
        #expect(engine.counters.evictions == 1)
        #expect(engine.snapshot(of: F.id(2), at: F.t0 + 5) == nil)
        #expect(engine.snapshot(of: F.id(1), at: F.t0 + 5) != nil)
        // The evicted beacon was present: it leaves with an `away`, so nobody downstream is stuck on it.
        #expect(
            F.presenceEvents(events).map { "\($0.state) \($0.beacon.beaconID)" } == [
                "away \(F.id(2))", "seen \(F.id(4))",
            ])
    }

    @Test func evictingABeaconInsideARegionExitsIt() {
        var engine = F.engine(settings: TrackerSettings(maxBeacons: 1))
        _ = F.feed(&engine, minor: 1, from: 0, to: 6, rssi: -50)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        let events = engine.process(F.report(2, at: 6, rssi: -90))
        #expect(F.regionEvents(events).map(\.kind) == [.exit])
        #expect(engine.takeStateChanges().contains { $0.beaconID == F.id(1) && $0.state == .outside })
    }

    @Test func reportWithoutRSSICountsAsSeenButNeverEntersTheFilter() {
        var engine = F.engine()
        _ = engine.process(F.report(1, at: 0, rssi: -65))
        let events = engine.process(F.report(1, at: 50, rssi: nil))
        let snapshot = engine.snapshot(of: F.id(1), at: F.t0 + 50)!
        #expect(snapshot.lastSeen == F.t0 + 50)
        #expect(snapshot.rssi == nil)
        #expect(snapshot.smoothedRSSI == -65)
        #expect(engine.counters.rssiUnavailable == 1)
        #expect(F.presenceEvents(events).isEmpty, "still present: no away, no second seen")
        // 50 s later the beacon is still within the away timeout thanks to the RSSI-less report.
        #expect(F.presenceEvents(engine.advance(to: F.t0 + 100)).isEmpty)
        #expect(F.presenceEvents(engine.advance(to: F.t0 + 110)).map(\.state) == [.away])
    }

    @Test func keepsFieldsMeasuredPowerNameAndRate() {
        var engine = F.engine()
        _ = engine.process(
            F.report(1, at: 0, rssi: -60, fields: ["battery_mv": .int(2900), "temperature_c": .double(21.5)]))
        for step in 1..<50 { _ = engine.process(F.report(1, at: Double(step) * 0.2, rssi: -60, name: "Tag")) }
        _ = engine.process(F.report(1, at: 10, rssi: -60, fields: ["battery_mv": .int(2890)]))
        let snapshot = engine.snapshot(of: F.id(1), at: F.t0 + 10)!
        #expect(snapshot.fields == ["battery_mv": .int(2890), "temperature_c": .double(21.5)])
        #expect(snapshot.name == "Tag")
        #expect(snapshot.measuredPower == -59)
        #expect(abs(snapshot.reportRate - 5) < 0.6)
        #expect(abs(snapshot.distance! - 1.0) < 0.1, "−60 dBm at −59 dBm@1m is about 1.09 m")
    }

    @Test func outOfOrderReportsAreClampedAndCounted() {
        var engine = F.engine()
        _ = engine.process(F.report(1, at: 10, rssi: -60))
        _ = engine.process(F.report(1, at: 9, rssi: -60))
        #expect(engine.counters.outOfOrder == 1)
        #expect(engine.snapshot(of: F.id(1), at: F.t0 + 10)!.lastSeen == F.t0 + 10)
        _ = engine.process(
            Observation(
                timestamp: .nan, beaconID: "x", format: "device", address: BluetoothAddress(rawValue: 1), rssi: -50))
        #expect(engine.counters.invalidTime == 1)
        #expect(engine.trackedCount == 1)
    }

    @Test func seenOnFirstSightingAwayAfterTheTimeout() {
        var engine = F.engine(regions: [])
        let first = engine.process(F.report(1, at: 0, rssi: -80))
        #expect(F.presenceEvents(first).map(\.state) == [.seen])
        #expect(engine.advance(to: F.t0 + 59.9).isEmpty)
        let away = F.presenceEvents(engine.advance(to: F.t0 + 60))
        #expect(away.map(\.state) == [.away])
        #expect(away.first?.time == F.t0 + 60)
        #expect(F.presenceEvents(engine.process(F.report(1, at: 70, rssi: -80))).map(\.state) == [.seen])
    }
}
