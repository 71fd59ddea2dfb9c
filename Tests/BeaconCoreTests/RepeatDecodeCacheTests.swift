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

    /// The key's fingerprint (what the cache's table is probed by) sees every byte, the length, the address and its type:
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

    /// The cache's own table against the two generations as dictionaries (what it was before, written out here):
    /// the same hits, misses, sizes and entries over 20,000 random lookups-then-inserts, with fingerprints forced to
    /// collide (200 keys on 4 fingerprints, among them 0 and 1, which the table keeps as tags of their own) and a
    /// capacity small enough to rotate the generations and leave removed slots in the previous one all the time.
    @Test(arguments: [1, 5, 64])
    func theTableBehavesAsTwoDictionaryGenerations(capacity: Int) {
        struct Reference {
            var current: [Int: String] = [:]
            var previous: [Int: String] = [:]
            let capacity: Int
            var hits = 0
            var misses = 0
            mutating func entry(for key: Int) -> String? {
                if let name = current[key] {
                    hits += 1
                    return name
                }
                if let name = previous.removeValue(forKey: key) {
                    hits += 1
                    insert(name, for: key)
                    return name
                }
                misses += 1
                return nil
            }
            mutating func insert(_ name: String, for key: Int) {
                if current.count >= capacity {
                    previous = current
                    current = [:]
                }
                current[key] = name
            }
        }
        let fingerprints: [UInt64] = [0, 1, 0x8000_0000_0000_0000, 0x1234]
        func key(_ number: Int) -> RepeatDecodeCache.Key {
            // Colliding fingerprints, and data that differs only in its last byte or its length.
            RepeatDecodeCache.Key(
                data: Array(repeating: 7, count: 9 + number % 3) + [UInt8(number)],
                address: BluetoothAddress(rawValue: UInt64(number % 2)), addressType: .publicDevice,
                fingerprint: fingerprints[number % fingerprints.count])
        }
        var cache = RepeatDecodeCache(capacity: capacity)
        var reference = Reference(capacity: capacity)
        var generator = SeededGenerator(seed: UInt64(capacity))
        for _ in 0..<20_000 {
            // Mostly a hot set of a few keys, sometimes any of the 200.
            let number = generator.next() % 4 == 0 ? Int(generator.next() % 200) : Int(generator.next() % 6)
            let expected = reference.entry(for: number)
            let found = cache.entry(for: key(number))
            #expect(found?.localName == expected)
            if expected == nil {
                reference.insert("k\(number)", for: number)
                cache.insert(.init(observations: [], localName: "k\(number)"), for: key(number))
            }
            #expect(cache.count == reference.current.count + reference.previous.count)
        }
        #expect(cache.hits == UInt64(reference.hits))
        #expect(cache.misses == UInt64(reference.misses))
        #expect(cache.hits > 1_000 && cache.misses > 1_000)
    }

    /// A handle kept on an entry stays with it when it moves between generations, and is gone when the entry is
    /// decoded again (a new entry starts without).
    @Test func aKeptHandleMovesWithItsEntry() throws {
        var cache = RepeatDecodeCache(capacity: 2)
        func key(_ byte: UInt8) -> RepeatDecodeCache.Key {
            RepeatDecodeCache.Key(
                data: [2, 1, byte], address: BluetoothAddress(rawValue: 1), addressType: .publicDevice)
        }
        let observation = Observation(
            timestamp: 0, beaconID: "b", format: "ibeacon", identifiers: [], address: BluetoothAddress(rawValue: 1),
            rssi: nil, measuredPower: nil)
        let two = RepeatDecodeCache.Entry(observations: [observation, observation], localName: nil)
        let inserted = cache.insert(two, for: key(0))
        let position = try #require(inserted)
        #expect(cache.handle(at: position, observation: 1) == .none)
        cache.setHandle(TrackerHandle(slot: 3, generation: 9), at: position, observation: 1)
        cache.insert(two, for: key(1))
        cache.insert(two, for: key(2))  // rotates: key 0 is in the previous generation
        let found = cache.position(for: key(0))
        let moved = try #require(found)
        #expect(cache.handle(at: moved, observation: 1) == TrackerHandle(slot: 3, generation: 9))
        #expect(cache.handle(at: moved, observation: 0) == .none)
        #expect(cache.handle(at: moved, observation: 2) == .none)  // past the observations
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.position(for: key(0)) == nil)
    }
}
