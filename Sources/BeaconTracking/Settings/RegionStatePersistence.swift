import BeaconModel

/// The region state of one beacon in one region, as persisted so that a restart fires no false events.
public struct PersistedRegionState: Sendable, Equatable, Hashable {
    public var region: String
    public var beaconID: String
    public var state: RegionState
    /// When the beacon entered `state`.
    public var since: Timestamp
    /// Last sighting that satisfied the region's (exit) condition; the exit period runs from here.
    public var lastQualifying: Timestamp
    /// When this row was written (capture-time clock); rows older than the restore age are ignored.
    public var updated: Timestamp

    public init(
        region: String, beaconID: String, state: RegionState, since: Timestamp,
        lastQualifying: Timestamp, updated: Timestamp
    ) {
        self.region = region
        self.beaconID = beaconID
        self.state = state
        self.since = since
        self.lastQualifying = lastQualifying
        self.updated = updated
    }
}

/// Where the region engine's state survives restarts. The SQLite outbox database implements it
/// (SQLiteStore); `InMemoryRegionStateStore` serves tests.
public protocol RegionStateStore: Sendable {
    func loadRegionStates() throws -> [PersistedRegionState]
    /// Upserts by (region, beaconID).
    func saveRegionStates(_ states: [PersistedRegionState]) throws
    func deleteRegionStates(_ keys: [(region: String, beaconID: String)]) throws
}
