import Testing

@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

/// Tracker handles (`TrackerHandle`, issue 45): a kept handle finds its beacon's slot without the lookup by id,
/// and a stale or foreign one (the beacon evicted, its slot given to another beacon, another tracker, another id)
/// never finds a wrong slot, only falls back to the lookup.
@Suite struct TrackerHandleTests {
    typealias F = EngineFixtures

    func beacon(_ id: String) -> () -> TrackedBeacon {
        { TrackedBeacon(beaconID: id, filter: .kalman(estimate: .nan, covariance: 0), now: 0) }
    }

    @Test func aKeptHandleFindsTheSlotWithoutTheLookup() {
        var tracker = BeaconTracker(maxBeacons: 4)
        let (slot, created, _) = tracker.slot(for: "a", at: 0, make: beacon("a"))
        #expect(created)
        #expect(tracker.lookupsByID == 1)
        let handle = tracker.handle(of: slot)
        for time in 1...5 {
            let again = tracker.slot(for: "a", hint: handle, at: Double(time), make: beacon("a"))
            #expect(again.slot == slot && !again.created && again.evicted == nil)
        }
        #expect(tracker.lookupsByID == 1)
        #expect(tracker.slots[slot].touched == 5)  // the hint path marks the beacon seen as the lookup does
    }

    /// Evicted, then its slot reused by another beacon: the old handle names the same slot number but an older
    /// generation, so it matches neither the old id (re-added elsewhere) nor the new one.
    @Test func aHandleOfAnEvictedBeaconNoLongerMatches() {
        var tracker = BeaconTracker(maxBeacons: 1)
        let a = tracker.slot(for: "a", at: 0, make: beacon("a"))
        let handleA = tracker.handle(of: a.slot)
        let b = tracker.slot(for: "b", at: 1, make: beacon("b"))
        #expect(b.evicted?.beaconID == "a")
        #expect(b.slot == a.slot)  // the freed slot is reused
        #expect(tracker.slot(of: handleA, holding: "a") == nil)
        #expect(tracker.slot(of: handleA, holding: "b") == nil)  // same slot number, older generation
        #expect(tracker.slot(of: tracker.handle(of: b.slot), holding: "b") == b.slot)
        // "a" comes back with its stale handle: a lookup, a new entry (evicting "b"), not b's slot taken over.
        let lookups = tracker.lookupsByID
        let again = tracker.slot(for: "a", hint: handleA, at: 2, make: beacon("a"))
        #expect(again.created)
        #expect(again.evicted?.beaconID == "b")
        #expect(tracker.slots[again.slot].beaconID == "a")
        #expect(tracker.lookupsByID == lookups + 1)
        #expect(tracker.slot(of: handleA, holding: "a") == nil)  // a new generation again
    }

    /// A handle from another tracker (a restarted engine with the same slot numbers and generations) or of another
    /// beacon is never taken for this one.
    @Test func aForeignHandleOrAnotherIdFallsBackToTheLookup() {
        var first = BeaconTracker(maxBeacons: 4)
        let slotInFirst = first.slot(for: "a", at: 0, make: beacon("a")).slot
        let inFirst = first.handle(of: slotInFirst)
        var second = BeaconTracker(maxBeacons: 4)
        let b = second.slot(for: "b", at: 0, make: beacon("b")).slot
        #expect(second.handle(of: b) == inFirst)  // slot 0, generation 0 in both
        #expect(second.slot(of: inFirst, holding: "a") == nil)
        let a = second.slot(for: "a", hint: inFirst, at: 1, make: beacon("a"))
        #expect(a.created && a.slot != b)
        #expect(second.slots[b].beaconID == "b" && second.slots[a.slot].beaconID == "a")
        #expect(second.slot(of: TrackerHandle(slot: 7, generation: 0), holding: "a") == nil)  // out of range
        #expect(second.slot(of: .none, holding: "a") == nil)
    }

    /// The engine with handles passed back gives the same events and state as without, through evictions in a
    /// tracker smaller than the beacons, handles kept across them, and one handle used for two ids.
    @Test func theEngineGivesTheSameEventsWithKeptHandles() {
        var plain = F.engine(settings: TrackerSettings(maxBeacons: 3))
        var handled = F.engine(settings: TrackerSettings(maxBeacons: 3))
        var handles: [Int: TrackerHandle] = [:]
        var plainEvents: [EngineEvent] = []
        var handledEvents: [EngineEvent] = []
        var time = 0.0
        for round in 0..<60 {
            // Four beacons into three slots, in an order that evicts one now and then; every 7th report of a
            // beacon uses the handle of another (as a stale cache entry could).
            let order: [Int] = Array([1, 2, 3, 1, 2, 1, 4, 1][(round % 8)...]) + Array([1, 2, 3, 4][...(round % 4)])
            for minor in order {
                time += 0.37
                let observation = F.report(minor, at: time, rssi: -55 - (round * minor) % 30)
                plainEvents += plain.advance(to: F.t0 + time)
                handledEvents += handled.advance(to: F.t0 + time)
                plainEvents += plain.process(observation)
                var handle = round % 7 == 0 ? handles[minor % 4 + 1] ?? .none : handles[minor] ?? .none
                handledEvents += handled.process(observation, handle: &handle)
                #expect(handled.tracker.slots[Int(handle.slot)].beaconID == F.id(minor))
                handles[minor] = handle
            }
        }
        #expect(handledEvents == plainEvents)
        #expect(plain.counters.evictions > 10)
        #expect(handled.counters == plain.counters)
        #expect(handled.stateSnapshot(at: F.t0 + time) == plain.stateSnapshot(at: F.t0 + time))
        #expect(handled.presenceSnapshot(at: F.t0 + time) == plain.presenceSnapshot(at: F.t0 + time))
        #expect(handled.tracker.lookupsByID < plain.tracker.lookupsByID / 2)
    }

    func pipeline(cache: Int, maxBeacons: Int) -> GatewayPipeline {
        let regions = [RegionRule(name: "near", match: RegionMatch(), enter: .rssi(-70), minDwell: 0)]
        return GatewayPipeline(
            decoder: BeaconDecoder(),
            engine: RegionEngine(
                settings: TrackerSettings(maxBeacons: maxBeacons), regions: regions,
                distance: DistanceEstimator(settings: DistanceSettings()), now: 0),
            includeDevices: true, repeatCacheCapacity: cache)
    }

    /// Through the pipeline: repeated advertisements reach their slots by the handle the repeat cache keeps
    /// (one lookup by id per beacon while nothing is evicted), and the events are the cache-off reference's, with a
    /// tracker too small for the beacons (evictions while the cache holds handles) and two senders of one iBeacon
    /// (two cache entries, one beacon id).
    @Test(arguments: [(maxBeacons: 100, cache: 1024), (maxBeacons: 3, cache: 1024), (maxBeacons: 3, cache: 2)])
    func thePipelineFindsRepeatsByTheirHandles(maxBeacons: Int, cache: Int) throws {
        var reports: [AdvertisingReport] = []
        for minor in 1...4 {
            let source = Observation(
                timestamp: 0, beaconID: "", format: "ibeacon", identifiers: [F.uuid, "1", String(minor)],
                address: BluetoothAddress(rawValue: 0xC0_FFEE_000000 | UInt64(minor)), rssi: -60, measuredPower: -59)
            reports.append(try #require(SyntheticAdvertisement.report(for: source)))
        }
        var twin = reports[0]  // minor 1 again, from another address
        twin.address = BluetoothAddress(rawValue: 0xC0_FFEE_0000FF)
        reports.append(twin)
        var reference = pipeline(cache: 0, maxBeacons: maxBeacons)
        var cached = pipeline(cache: cache, maxBeacons: maxBeacons)
        var referenceEvents: [EngineEvent] = []
        var events: [EngineEvent] = []
        for step in 0..<400 {
            var report = reports[(step * 7 + step / 5) % reports.count]
            report.timestamp = 1_000 + Double(step) * 0.3
            report.rssi = Int8(-50 - step % 35)
            reference.ingest(report, into: &referenceEvents)
            cached.ingest(report, into: &events)
        }
        #expect(events == referenceEvents)
        #expect(cached.engine.counters == reference.engine.counters)
        #expect(cached.stateSnapshot(at: 2_000) == reference.stateSnapshot(at: 2_000))
        #expect(cached.presenceSnapshot(at: 2_000) == reference.presenceSnapshot(at: 2_000))
        #expect(cached.counters.repeatedReports > 0)
        if maxBeacons == 100 && cache == 1024 {
            // Four beacon ids (a recognised beacon is no device sighting), five cache entries (the twin's is its
            // own): each entry's first observation looks its id up, every later one comes by its handle.
            #expect(cached.engine.trackedCount == 4)
            #expect(cached.engine.tracker.lookupsByID == 5)
            #expect(reference.engine.tracker.lookupsByID == reference.engine.counters.observations)
        } else {
            #expect(cached.engine.tracker.lookupsByID < reference.engine.tracker.lookupsByID)
        }
    }
}
