import BeaconModel
import BeaconSimulation
import BeaconTracking

#if canImport(Glibc)
import Glibc
#endif

/// Tracker + region engine: reports per second with 10,000 tracked beacons and 100 regions, memory per tracked
/// beacon, and an in-run reference (the same loop doing a plain dictionary update keyed by beacon id).
enum TrackerBench {
    static let beaconCount = 10_000
    static let regionCount = 100
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    /// Pre-generated schedule length; the timed loop cycles through it, bounded by count and time.
    static let scheduleLength = 1 << 20
    /// Each trial is bounded by count and by wall time; trials of the engine and of the reference alternate so
    /// both see the same neighbours on this shared machine.
    static let trials = 5
    static let maxReports = 4_000_000
    static let maxSeconds = 1.2

    static func run() {
        let regions = makeRegions()
        let schedule = Schedule(length: scheduleLength, beacons: beaconCount)
        print(
            "  \(beaconCount) beacons, \(regions.count) regions (each beacon matches 2), schedule of \(scheduleLength) reports"
        )

        // Memory first, both engines kept alive so the second cannot reuse memory freed by the first.
        var engines: [(FilterSettings.Kind, RegionEngine)] = []
        for kind in [FilterSettings.Kind.kalman, .runningAverage] {
            let settings = TrackerSettings(filter: FilterSettings(kind: kind))
            let (bytes, engine) = memoryPerBeacon(regions: regions, settings: settings)
            print(
                "  memory per tracked beacon (\(kind.rawValue) filter): \(bytes) bytes (RSS growth incl. its id strings)"
            )
            engines.append((kind, engine))
        }
        let templates = (0..<beaconCount).map(template)
        var table: [String: (Double, Int)] = [:]
        var references: [Timing] = []
        for index in engines.indices {
            var results: [Timing] = []
            var clock = 100.0
            for _ in 0..<trials {
                results.append(timeEngine(&engines[index].1, clock: &clock, templates: templates, schedule: schedule))
                references.append(timeDictionary(&table, templates: templates, schedule: schedule))
            }
            let engine = engines[index].1
            let events = results.reduce(0) { $0 + $1.events }
            let reports = results.reduce(0) { $0 + $1.count }
            print(
                "  engine (\(engines[index].0.rawValue) filter): \(summary(results)) "
                    + "(\(reports) reports, \(events) events, \(engine.trackedCount) tracked, "
                    + "\(engine.counters.evictions) evictions)")
        }
        print("  reference, dictionary update per report: \(summary(references))")
        churn(regions: regions)
    }

    /// Twice as many beacons as `max_beacons`, in random order: most reports create an entry and evict one.
    static func churn(regions: [RegionRule]) {
        var engine = RegionEngine(
            settings: TrackerSettings(maxBeacons: beaconCount), regions: regions,
            distance: SimulationDistance(), now: 0)
        let templates = (0..<(2 * beaconCount)).map(template)
        let schedule = Schedule(length: 1 << 18, beacons: 2 * beaconCount)
        var clock = 100.0
        let result = timeEngine(&engine, clock: &clock, templates: templates, schedule: schedule)
        print(
            "  churn, \(2 * beaconCount) beacons through max_beacons \(beaconCount): \(format(result.rate)) reports/s of CPU "
                + "time (\(result.count) reports, \(engine.counters.evictions) evictions, \(engine.trackedCount) tracked)"
        )
    }

    /// "best N, median M reports/s of CPU time" over trials.
    static func summary(_ results: [Timing]) -> String {
        let rates = results.map(\.rate).sorted()
        let wall = results.reduce(0) { $0 + $1.seconds }
        let cpu = results.reduce(0) { $0 + $1.cpuSeconds }
        return "best \(format(rates.last ?? 0)), median \(format(rates[rates.count / 2])) reports/s of CPU time "
            + "over \(results.count) trials (\(format2(cpu)) s CPU in \(format2(wall)) s wall)"
    }

    static func template(_ index: Int) -> Observation {
        let major = index % (regionCount - 1)
        let minor = index
        return Observation(
            timestamp: 0, beaconID: "ibeacon:\(uuid):\(major):\(minor)", format: "ibeacon",
            identifiers: [uuid, String(major), String(minor)],
            address: BluetoothAddress(rawValue: 0xC000_0000_0000 | UInt64(index)), rssi: -70,
            measuredPower: -59)
    }

    /// 99 regions by major (half on RSSI, half on distance) and one for the whole UUID.
    static func makeRegions() -> [RegionRule] {
        var regions = (0..<(regionCount - 1)).map { major in
            RegionRule(
                name: "room-\(major)", match: .iBeacon(uuid: uuid, major: UInt16(major)),
                enter: major.isMultiple(of: 2) ? .rssi(-68) : .distance(3))
        }
        regions.append(RegionRule(name: "building", match: .iBeacon(uuid: uuid), enter: .rssi(-85)))
        return regions
    }

    /// Which beacon reports, with which RSSI, in order; 50,000 reports per simulated second.
    struct Schedule {
        var beacon: [Int32]
        var rssi: [Int8]
        let step = 1.0 / 50_000

        init(length: Int, beacons: Int) {
            var random = SimulationRandom(seed: 1)
            beacon = (0..<length).map { _ in Int32(random.next() % UInt64(beacons)) }
            rssi = beacon.map { index in
                let mean = -60 - Int(index % 30)
                return Int8(mean + Int(random.next() % 17) - 8)
            }
        }
    }

    /// Resident set size in bytes, from /proc/self/statm (second field, in pages).
    /// glibc's `malloc_trim(0)`: free heap pages back to the kernel (looked up at run time; malloc.h is not in the
    /// Glibc module). A no-op where the symbol is missing.
    static func releaseFreedMemory() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    static func resident() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// RSS growth from making 10,000 beacons' observations (fresh strings, as a decoder makes them) and feeding
    /// each beacon 20 reports (filter, memberships, levels), minus the observation array itself, per beacon.
    static func memoryPerBeacon(regions: [RegionRule], settings: TrackerSettings) -> (Int, RegionEngine) {
        let before = resident()
        var engine = RegionEngine(settings: settings, regions: regions, distance: SimulationDistance(), now: 0)
        var observations = (0..<beaconCount).map(template)
        var time = 0.0
        for round in 0..<20 {
            for index in observations.indices {
                time += 1e-4
                observations[index].timestamp = time
                observations[index].rssi = -60 - (index + round) % 25
                _ = engine.process(observations[index])
            }
            _ = engine.takeStateChanges()  // as the daemon does after each batch
        }
        let after = resident()
        let arrayBytes = observations.capacity * MemoryLayout<Observation>.stride
        observations = []
        return ((after - before - arrayBytes) / beaconCount, engine)
    }

    static func now(_ clock: clockid_t = CLOCK_MONOTONIC) -> Double {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Rates are per second of this thread's CPU time: the machine is shared with other builds, and CPU time is
    /// what a busy neighbour disturbs least. Wall time is printed beside it.
    struct Timing {
        var count: Int
        var seconds: Double
        var cpuSeconds: Double
        var events: Int
        var rate: Double { Double(count) / cpuSeconds }
    }

    static func timeEngine(
        _ engine: inout RegionEngine, clock simulated: inout Double, templates: [Observation],
        schedule: Schedule
    ) -> Timing {
        var count = 0
        var events = 0
        let start = now()
        let cpuStart = now(CLOCK_THREAD_CPUTIME_ID)
        outer: while count < maxReports {
            for index in 0..<schedule.beacon.count {
                var observation = templates[Int(schedule.beacon[index])]
                simulated += schedule.step
                observation.timestamp = simulated
                observation.rssi = Int(schedule.rssi[index])
                events += engine.process(observation).count
                count += 1
                if count & 0xFFFF == 0 {
                    events += engine.advance(to: simulated).count
                    events += engine.takeStateChanges().count
                    if now() - start > maxSeconds || count >= maxReports { break outer }
                }
            }
        }
        return Timing(
            count: count, seconds: now() - start, cpuSeconds: now(CLOCK_THREAD_CPUTIME_ID) - cpuStart,
            events: events)
    }

    static func timeDictionary(
        _ table: inout [String: (Double, Int)], templates: [Observation],
        schedule: Schedule
    ) -> Timing {
        var simulated = 100.0
        var count = 0
        let start = now()
        let cpuStart = now(CLOCK_THREAD_CPUTIME_ID)
        outer: while count < maxReports {
            for index in 0..<schedule.beacon.count {
                var observation = templates[Int(schedule.beacon[index])]
                simulated += schedule.step
                observation.timestamp = simulated
                observation.rssi = Int(schedule.rssi[index])
                table[observation.beaconID, default: (0, 0)].0 = observation.timestamp
                table[observation.beaconID, default: (0, 0)].1 += observation.rssi ?? 0
                count += 1
                if count & 0xFFFF == 0, now() - start > maxSeconds || count >= maxReports { break outer }
            }
        }
        let seconds = now() - start
        let cpuSeconds = now(CLOCK_THREAD_CPUTIME_ID) - cpuStart
        precondition(table.count <= templates.count)
        return Timing(count: count, seconds: seconds, cpuSeconds: cpuSeconds, events: 0)
    }

    static func format(_ value: Double) -> String {
        let whole = Int(value.rounded())
        var digits = String(whole)
        var out = ""
        while digits.count > 3 {
            out = "," + digits.suffix(3) + out
            digits = String(digits.dropLast(3))
        }
        return digits + out
    }

    static func format2(_ value: Double) -> String { String((value * 100).rounded() / 100) }
}
