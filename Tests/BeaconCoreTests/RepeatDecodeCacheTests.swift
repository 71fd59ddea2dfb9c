import Testing

@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

/// The repeated-advertisement cache (`RepeatDecodeCache`): the pipeline gives exactly the events it gives without
/// it, on the real capture and across a decoder reload, and the cache stays within its two generations.
@Suite struct RepeatDecodeCacheTests {
    func pipeline(cache: Int, includeDevices: Bool, decoder: BeaconDecoder = BeaconDecoder()) -> GatewayPipeline {
        let regions = [RegionRule(name: "near", match: RegionMatch(), enter: .rssi(-70), minDwell: 0)]
        return GatewayPipeline(
            decoder: decoder,
            engine: RegionEngine(regions: regions, distance: DistanceEstimator(settings: DistanceSettings()), now: 0),
            includeDevices: includeDevices, repeatCacheCapacity: cache)
    }

    /// The Android capture's events, played `rounds` times one after the other (each round later by the capture's
    /// length plus a second), so the same devices send the same bytes again.
    func captureEvents(rounds: Int) throws -> [CapturedHCIEvent] {
        let capture = try BTSnoopReader.readAll(DecodingFixtures.capture)
        var once: [CapturedHCIEvent] = []
        for record in capture.records {
            guard let event = record.hciEvent(datalink: capture.datalink) else { continue }
            once.append(CapturedHCIEvent(timestamp: record.unixTime, bytes: Array(event)))
        }
        let first = try #require(once.first?.timestamp)
        let span = try #require(once.last?.timestamp) - first + 1
        var events: [CapturedHCIEvent] = []
        for round in 0..<rounds {
            for event in once {
                events.append(CapturedHCIEvent(timestamp: event.timestamp + Double(round) * span, bytes: event.bytes))
            }
        }
        return events
    }

    @Test(arguments: [false, true])
    func theCaptureGivesTheSameEventsWithAndWithoutTheCache(includeDevices: Bool) throws {
        let input = try captureEvents(rounds: 3)
        var reference = pipeline(cache: 0, includeDevices: includeDevices)
        var referenceEvents: [EngineEvent] = []
        reference.ingest(input, into: &referenceEvents)
        #expect(reference.counters.repeatedReports == 0)
        #expect(referenceEvents.count > 50)  // 72 without devices (region, presence and sighting events)
        // The default size, and a size of 2 that rotates its generations all the time.
        for size in [1024, 2] {
            var cached = pipeline(cache: size, includeDevices: includeDevices)
            var events: [EngineEvent] = []
            cached.ingest(input, into: &events)
            #expect(events == referenceEvents, "cache size \(size)")
            var counters = cached.counters
            #expect(counters.repeatedReports > 0, "cache size \(size)")
            counters.repeatedReports = 0
            #expect(counters == reference.counters, "cache size \(size)")
            #expect(cached.stateSnapshot(at: 2e9) == reference.stateSnapshot(at: 2e9))
        }
        var full = pipeline(cache: 1024, includeDevices: includeDevices)
        var ignored: [EngineEvent] = []
        full.ingest(input, into: &ignored)
        // Every round after the first repeats at least the first round's stable advertisements.
        #expect(full.counters.repeatedReports >= full.counters.reports / 3)
    }

    @Test func eachRepeatCarriesItsOwnTimeAndRSSI() throws {
        var pipeline = pipeline(cache: 1024, includeDevices: false)
        let source = Observation(
            timestamp: 100, beaconID: "", format: "ibeacon",
            identifiers: ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1", "2"],
            address: BluetoothAddress(rawValue: 0xC0_FFEE_000001), rssi: -60, measuredPower: -59)
        var report = try #require(SyntheticAdvertisement.report(for: source))
        var events: [EngineEvent] = []
        var seen: [(Timestamp?, Int?)] = []
        for (time, rssi) in [(100.0, Int8(-60)), (107, -41), (108, -77)] {
            report.timestamp = time
            report.rssi = rssi
            pipeline.ingest(report, into: &events)
            let beacons = pipeline.presenceSnapshot(at: time).compactMap {
                if case .presence(let p) = $0 { p.beacon } else { nil }
            }
            #expect(beacons.count == 1)
            seen.append((beacons.first?.lastSeen, beacons.first?.rssi))
        }
        #expect(pipeline.counters.repeatedReports == 2)
        #expect(seen.map(\.0) == [100, 107, 108])
        #expect(seen.map(\.1) == [-60, -41, -77])
    }

    /// A reload may change what the same bytes decode to: the cache starts again.
    @Test func aReloadedDecoderDecodesAgain() throws {
        let source = Observation(
            timestamp: 100, beaconID: "", format: "ibeacon",
            identifiers: ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1", "2"],
            address: BluetoothAddress(rawValue: 0xC0_FFEE_000001), rssi: -60, measuredPower: -59)
        var report = try #require(SyntheticAdvertisement.report(for: source))
        var pipeline = pipeline(cache: 1024, includeDevices: true)
        var events: [EngineEvent] = []
        pipeline.ingest(report, into: &events)
        let withoutIBeacon = BeaconDecoder(builtins: FormatRegistry.builtins.filter { $0.name != "ibeacon" })
        _ = pipeline.reload(
            decoder: withoutIBeacon, includeDevices: true, regions: [], settings: TrackerSettings(), now: 101)
        report.timestamp = 102
        var after: [EngineEvent] = []
        pipeline.ingest(report, into: &after)
        #expect(pipeline.counters.repeatedReports == 0)
        let formats = after.compactMap { if case .sighting(let s) = $0 { s.beacon.format } else { nil } }
        #expect(formats == ["device"])
    }

    @Test func theCacheKeepsAtMostTwoGenerations() {
        var cache = RepeatDecodeCache(capacity: 2)
        func key(_ byte: UInt8) -> RepeatDecodeCache.Key {
            RepeatDecodeCache.Key(
                data: [2, 1, byte], address: BluetoothAddress(rawValue: 1), addressType: .publicDevice)
        }
        let entry = RepeatDecodeCache.Entry(observations: [], localName: nil)
        for byte: UInt8 in 0..<10 {
            if cache.entry(for: key(byte)) == nil { cache.insert(entry, for: key(byte)) }
            #expect(cache.count <= 4)
        }
        #expect(cache.misses == 10)
        // 8 and 9 are in the current generation, 6 and 7 in the previous one, older ones are gone.
        #expect(cache.entry(for: key(9)) != nil)
        #expect(cache.entry(for: key(6)) != nil)  // moves to the current generation, which rotates first
        #expect(cache.entry(for: key(5)) == nil)
        #expect(cache.hits == 2)
        // The same bytes from another sender, or another address type, are another key.
        #expect(
            cache.entry(
                for: RepeatDecodeCache.Key(
                    data: [2, 1, 9], address: BluetoothAddress(rawValue: 2), addressType: .publicDevice)) == nil)
        #expect(
            cache.entry(
                for: RepeatDecodeCache.Key(
                    data: [2, 1, 9], address: BluetoothAddress(rawValue: 1), addressType: .randomDevice)) == nil)
        var off = RepeatDecodeCache(capacity: 0)
        off.insert(entry, for: key(1))
        #expect(off.entry(for: key(1)) == nil)
        #expect(off.count == 0)
    }

    /// The key's fingerprint (what the dictionary hashes) sees every byte, the length, the address and its type:
    /// one changed byte anywhere in 0...40 bytes of data, a trailing zero, another sender or type makes
    /// another fingerprint, and equal keys have equal ones.
    @Test func theFingerprintCoversEveryPartOfTheKey() {
        let address = BluetoothAddress(rawValue: 0xC0FF_EE12_3456)
        var fingerprints = Set<UInt64>()
        var keys = 0
        for length in 0...40 {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let key = RepeatDecodeCache.Key(data: data, address: address, addressType: .publicDevice)
            #expect(key == RepeatDecodeCache.Key(data: data, address: address, addressType: .publicDevice))
            #expect(
                key.fingerprint
                    == RepeatDecodeCache.Key(data: data, address: address, addressType: .publicDevice).fingerprint)
            fingerprints.insert(key.fingerprint)
            keys += 1
            for index in data.indices {
                var changed = data
                changed[index] ^= 0x01
                let other = RepeatDecodeCache.Key(data: changed, address: address, addressType: .publicDevice)
                #expect(other != key)
                fingerprints.insert(other.fingerprint)
                keys += 1
            }
            for other in [
                RepeatDecodeCache.Key(data: data + [0], address: address, addressType: .publicDevice),
                RepeatDecodeCache.Key(
                    data: data, address: BluetoothAddress(rawValue: address.rawValue ^ 1), addressType: .publicDevice),
                RepeatDecodeCache.Key(data: data, address: address, addressType: .randomDevice),
            ] {
                #expect(other != key)
                #expect(other.fingerprint != key.fingerprint)
            }
        }
        #expect(fingerprints.count == keys)  // 861 distinct keys, 861 distinct fingerprints
    }
}
