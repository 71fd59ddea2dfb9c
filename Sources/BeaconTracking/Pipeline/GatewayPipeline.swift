import BeaconFormats
import BeaconModel

/// The whole pure path from raw HCI event bytes to engine events: HCI parsing, extended-report reassembly,
/// beacon decoding, device-name merging across advertising and scan-response PDUs, tracking and regions.
///
/// A value type owned by one task (the daemon's loop, the replay, the bench). It reads no clock: time comes
/// with each captured event, and `advance(to:)` drives timeouts when no reports arrive.
public struct GatewayPipeline: Sendable {
    public private(set) var decoder: BeaconDecoder
    public private(set) var engine: RegionEngine
    public private(set) var includeDevices: Bool
    public private(set) var counters = PipelineCounters()
    /// The last malformed event's problem, for the daemon's log (rate-limited there).
    public private(set) var lastDecodeError: DecodeError?
    /// Resolves private addresses to the devices of `devices.known` (docs/private-devices.md).
    public private(set) var resolver: PrivateAddressResolver
    /// The devices the resolver's key indices refer to.
    public private(set) var privateDevices: [PrivateDevice]
    /// `devices.publish_unresolved`.
    public private(set) var publishUnresolved: Bool
    private var assembler = ExtendedReportAssembler()
    private var names: DeviceNameCache
    /// Decoded observations of recent advertisements, by bytes and sender (`RepeatDecodeCache`).
    private var repeats: RepeatDecodeCache
    /// Last-seen times already handed out by `takeSeenDeviceKeys`, per device.
    private var savedSeen: [Timestamp?] = []
    var replayGuard = EncryptedCounterGuard()

    /// `learnedOrders`: byte orders of keys seen before (by device name, from the state database).
    /// `repeatCacheCapacity`: entries per generation of the repeated-advertisement cache (`RepeatDecodeCache`);
    /// 0 decodes every report. The default holds every beacon of a busy site (the RSS bench's 1,000) in one
    /// generation.
    public init(
        decoder: BeaconDecoder, engine: RegionEngine, includeDevices: Bool, nameCacheCapacity: Int = 2048,
        devices: PrivateDeviceSettings = PrivateDeviceSettings(), learnedOrders: [String: KeyByteOrder] = [:],
        repeatCacheCapacity: Int = 1024
    ) {
        self.decoder = decoder
        self.engine = engine
        self.includeDevices = includeDevices
        self.names = DeviceNameCache(capacity: nameCacheCapacity)
        self.repeats = RepeatDecodeCache(capacity: repeatCacheCapacity)
        self.resolver = devices.resolver(learnedOrders: learnedOrders)
        self.privateDevices = devices.resolvable
        self.publishUnresolved = devices.publishUnresolved
    }

    /// Feeds one HCI event (event code first, with or without the H4 byte); appends the resulting engine
    /// events to `events`. Malformed events are counted and skipped (reports before the problem are kept).
    public mutating func ingest(_ event: CapturedHCIEvent, into events: inout [EngineEvent]) {
        counters.hciEvents += 1
        // Each report goes on as it is parsed (no array of the event's reports per event); the reports before a
        // malformed one are ingested before the error arrives, as when they were collected first.
        do {
            try HCIEventParser.forEachReport(in: event.bytes, timestamp: event.timestamp) { report in
                ingest(report, into: &events)
            }
        } catch {
            counters.malformedEvents += 1
            lastDecodeError = error
        }
    }

    /// Feeds a batch of HCI events in order, as `ingest(_:into:)` does one by one (the live daemon's unit of
    /// work: one batch per wake-up of the reading thread).
    public mutating func ingest(_ batch: [CapturedHCIEvent], into events: inout [EngineEvent]) {
        for event in batch { ingest(event, into: &events) }
    }

    /// Feeds one advertising report.
    public mutating func ingest(_ report: AdvertisingReport, into events: inout [EngineEvent]) {
        counters.reports += 1
        if report.timestamp.isFinite { counters.lastReport = max(counters.lastReport, report.timestamp) }
        guard let complete = assembler.add(report) else { return }
        var observations: [Observation]
        // A repeat's observations come from the cache as they are; this report's time and RSSI go on each copy
        // below (so the cached array is not copied to be changed). `cached`: where the cache keeps them and the
        // tracker handles of their beacons.
        var repeated = false
        var cached: RepeatDecodeCache.Position?
        switch resolver.resolve(complete.address, type: complete.addressType, at: complete.timestamp) {
        case .notPrivate:
            (observations, repeated, cached) = decodeRepeatable(complete)
        case .resolved(let index, _):
            counters.resolvedReports += 1
            let data = parse(complete)
            observations = decoder.observations(of: complete, in: data, includeDevices: false)
            let device = DecodedAdvertisement(report: complete, advertisingData: data, beacons: [])
            observations.append(privateDevices[index].observation(from: device))
        case .unresolved where publishUnresolved:
            (observations, repeated, cached) = decodeRepeatable(complete)
        case .unresolved:
            // Privacy by default: nothing identified by this address (device sightings, frames keyed by the
            // address) leaves the gateway; beacons with identifiers of their own still do.
            counters.unresolvedPrivateReports += 1
            observations = decoder.observations(
                of: complete, in: parse(complete), includeDevices: false, addressFrames: false)
        }
        guard !observations.isEmpty else { return }
        let rssi = complete.rssi.map { Int($0) }
        for (number, var observation) in observations.enumerated() {
            if repeated {
                observation.timestamp = complete.timestamp
                observation.rssi = rssi
            }
            guard replayGuard.admit(observation) else { continue }
            counters.beacons += 1
            if observation.name == nil { observation.name = names.name(for: complete.address) }
            guard let cached else {
                events.append(contentsOf: engine.process(observation))
                continue
            }
            // The beacon's slot by the handle the cache kept (no hash of its id), and the handle kept for next time.
            let kept = repeats.handle(at: cached, observation: number)
            var handle = kept
            events.append(contentsOf: engine.process(observation, handle: &handle))
            if handle != kept { repeats.setHandle(handle, at: cached, observation: number) }
        }
        counters.replayedFrames = replayGuard.duplicates
    }

    /// Parses the report's AD structures and remembers the device's local name, if it sent one.
    private mutating func parse(_ report: AdvertisingReport) -> AdvertisingData {
        let data = AdvertisingData(report.data)
        if let name = data.localName { names.remember(name, for: report.address) }
        return data
    }

    /// Observations straight from the AD structures (the one decode path; the decode bench measures it), or, when
    /// the device sent the same bytes recently, the cached observations (`repeated`: they still carry the time
    /// and RSSI of the report that was decoded; the caller puts this report's on them).
    /// `position`: where the cache keeps the observations (nil when it does not), for their tracker handles.
    private mutating func decodeRepeatable(
        _ report: AdvertisingReport
    ) -> (list: [Observation], repeated: Bool, position: RepeatDecodeCache.Position?) {
        let key =
            report.data.count <= RepeatDecodeCache.maximumDataLength
            ? RepeatDecodeCache.Key(data: report.data, address: report.address, addressType: report.addressType)
            : nil
        if let key, let position = repeats.position(for: key) {
            counters.repeatedReports += 1
            let entry = repeats.entry(at: position)
            if let name = entry.localName { names.remember(name, for: report.address) }
            return (entry.observations, true, position)
        }
        let data = parse(report)
        let observations = decoder.observations(of: report, in: data, includeDevices: includeDevices)
        guard let key else { return (observations, false, nil) }
        let position = repeats.insert(.init(observations: observations, localName: data.localName), for: key)
        return (observations, false, position)
    }

    /// The engine's taught table (`RegionEngine.setTaught`).
    public mutating func setTaught(_ table: TaughtTable) { engine.setTaught(table) }

    /// Starts a teach (`RegionEngine.startTeach`); a failure kind when it cannot.
    public mutating func startTeach(_ recording: TeachRecording) -> String? { engine.startTeach(recording) }

    /// The running teaches' progress and ends (`RegionEngine.advanceTeaches`).
    public mutating func advanceTeaches(to time: Timestamp) -> [TeachUpdate] { engine.advanceTeaches(to: time) }

    /// Lets time pass (exit periods, away timeouts) without a report.
    public mutating func advance(to time: Timestamp) -> [EngineEvent] { engine.advance(to: time) }

    /// Drops resolved addresses whose lifetime ran out (on the daemon's tick).
    public mutating func expireResolvedAddresses(at time: Timestamp) { resolver.expire(at: time) }

    /// Rows for the state database's `device_keys` table: every device that resolved an address since its row
    /// was last taken, at most once per `interval` seconds of capture time per device (a newly learned byte
    /// order at once).
    public mutating func takeSeenDeviceKeys(every interval: Double = 60) -> [SeenDeviceKey] {
        _ = resolver.takeLearnedOrders()
        if savedSeen.count != privateDevices.count { savedSeen = Array(repeating: nil, count: privateDevices.count) }
        var rows: [SeenDeviceKey] = []
        for index in privateDevices.indices {
            guard let order = resolver.orders[index], let seen = resolver.lastSeen[index],
                let key = privateDevices[index].key
            else { continue }
            if let saved = savedSeen[index], seen - saved < interval { continue }
            savedSeen[index] = seen
            rows.append(
                SeenDeviceKey(
                    name: privateDevices[index].name, fingerprint: key.fingerprint, order: order,
                    lastSeen: seen))
        }
        return rows
    }

    /// Applies reloaded `devices` settings (SIGHUP); byte orders learned for devices that stay are kept.
    public mutating func reload(devices: PrivateDeviceSettings) {
        var learned: [String: KeyByteOrder] = [:]
        for (index, device) in privateDevices.enumerated() {
            if let order = resolver.orders[index] { learned[device.name] = order }
        }
        resolver = devices.resolver(learnedOrders: learned)
        repeats.removeAll()
        privateDevices = devices.resolvable
        savedSeen = []
        publishUnresolved = devices.publishUnresolved
    }

    /// Region `state` events for every (region, beacon) pair known.
    public func stateSnapshot(at time: Timestamp) -> [EngineEvent] { engine.stateSnapshot(at: time) }

    /// Restores persisted region state later than at construction (a replay restores at its first event's
    /// capture time); returns the rows taken. See `RegionEngine.restore(_:now:)`.
    @discardableResult
    public mutating func restore(_ rows: [PersistedRegionState], now: Timestamp) -> Int {
        engine.restore(rows, now: now)
    }

    /// A `presence` event with the current state for every tracked beacon (`RegionEngine.presenceSnapshot`).
    public func presenceSnapshot(at time: Timestamp) -> [EngineEvent] { engine.presenceSnapshot(at: time) }

    /// Region states the caller must persist since the last call.
    public mutating func takeStateChanges() -> [PersistedRegionState] { engine.takeStateChanges() }

    /// Applies a reloaded configuration (SIGHUP): new formats and regions, tracker and region state kept for
    /// regions whose names stay.
    public mutating func reload(
        decoder: BeaconDecoder, includeDevices: Bool, regions: [RegionRule],
        settings: TrackerSettings, now: Timestamp
    ) -> [EngineEvent] {
        self.decoder = decoder
        self.includeDevices = includeDevices
        repeats.removeAll()
        return engine.reload(regions: regions, settings: settings, now: now)
    }
}

/// Counters of the decoding half of the pipeline (the tracker keeps its own, `RegionEngine.counters`).
public struct PipelineCounters: Sendable, Equatable {
    public var hciEvents: UInt64 = 0
    public var malformedEvents: UInt64 = 0
    public var reports: UInt64 = 0
    /// Capture time of the newest advertising report (−infinity before the first).
    public var lastReport: Timestamp = -.infinity
    /// Observations handed to the tracker (beacons and, where allowed, plain devices).
    public var beacons: UInt64 = 0
    /// Reports from private addresses resolved to a configured device.
    public var resolvedReports: UInt64 = 0
    /// Reports from resolvable private addresses that matched no key (not published as devices).
    public var unresolvedPrivateReports: UInt64 = 0
    /// Encrypted frames dropped because their counter was not newer than the device's last one.
    public var replayedFrames: UInt64 = 0
    /// Reports whose advertising data repeated bytes the same device sent recently: decoded from the cache.
    public var repeatedReports: UInt64 = 0
    public init() {}
}
