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
    private var assembler = ExtendedReportAssembler()
    private var names: DeviceNameCache

    public init(decoder: BeaconDecoder, engine: RegionEngine, includeDevices: Bool, nameCacheCapacity: Int = 2048) {
        self.decoder = decoder
        self.engine = engine
        self.includeDevices = includeDevices
        self.names = DeviceNameCache(capacity: nameCacheCapacity)
    }

    /// Feeds one HCI event (event code first, with or without the H4 byte); appends the resulting engine
    /// events to `events`. Malformed events are counted and skipped (reports before the problem are kept).
    public mutating func ingest(_ event: CapturedHCIEvent, into events: inout [EngineEvent]) {
        counters.hciEvents += 1
        var reports: [AdvertisingReport] = []
        do {
            try HCIEventParser.forEachReport(in: event.bytes, timestamp: event.timestamp) { reports.append($0) }
        } catch {
            counters.malformedEvents += 1
            lastDecodeError = error
        }
        for report in reports {
            ingest(report, into: &events)
        }
    }

    /// Feeds one advertising report.
    public mutating func ingest(_ report: AdvertisingReport, into events: inout [EngineEvent]) {
        counters.reports += 1
        guard let complete = assembler.add(report) else { return }
        let decoded = decoder.decode(complete)
        if let name = decoded.advertisingData.localName { names.remember(name, for: complete.address) }
        var observations = decoded.observations(includeDevices: includeDevices)
        counters.beacons += UInt64(observations.count)
        for index in observations.indices where observations[index].name == nil {
            observations[index].name = names.name(for: complete.address)
        }
        for observation in observations {
            events.append(contentsOf: engine.process(observation))
        }
    }

    /// Lets time pass (exit periods, away timeouts) without a report.
    public mutating func advance(to time: Timestamp) -> [EngineEvent] { engine.advance(to: time) }

    /// Region `state` events for every (region, beacon) pair known.
    public func stateSnapshot(at time: Timestamp) -> [EngineEvent] { engine.stateSnapshot(at: time) }

    /// Region states the caller must persist since the last call.
    public mutating func takeStateChanges() -> [PersistedRegionState] { engine.takeStateChanges() }

    /// Applies a reloaded configuration (SIGHUP): new formats and regions, tracker and region state kept for
    /// regions whose names stay.
    public mutating func reload(decoder: BeaconDecoder, includeDevices: Bool, regions: [RegionRule],
                                settings: TrackerSettings, now: Timestamp) -> [EngineEvent] {
        self.decoder = decoder
        self.includeDevices = includeDevices
        return engine.reload(regions: regions, settings: settings, now: now)
    }
}

/// Counters of the decoding half of the pipeline (the tracker keeps its own, `RegionEngine.counters`).
public struct PipelineCounters: Sendable, Equatable {
    public var hciEvents: UInt64 = 0
    public var malformedEvents: UInt64 = 0
    public var reports: UInt64 = 0
    /// Observations handed to the tracker (beacons and, where allowed, plain devices).
    public var beacons: UInt64 = 0
    public init() {}
}
