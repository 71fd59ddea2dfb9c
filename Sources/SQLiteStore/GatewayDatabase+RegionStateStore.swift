import BeaconTracking

extension GatewayDatabase: RegionStateStore {
    public func loadRegionStates() throws -> [PersistedRegionState] {
        try performSync { (connection) throws(SQLiteError) in try connection.regionStates.load() }
    }

    public func saveRegionStates(_ states: [PersistedRegionState]) throws {
        try performSync { (connection) throws(SQLiteError) in try connection.regionStates.save(states) }
    }

    public func deleteRegionStates(_ keys: [(region: String, beaconID: String)]) throws {
        try performSync { (connection) throws(SQLiteError) in try connection.regionStates.delete(keys) }
    }
}

/// The same for callers on the cooperative pool (the daemon's loop): the work runs on the database queue and
/// the caller is resumed, instead of a thread of the pool waiting in `queue.sync`.
extension GatewayDatabase {
    public func storedRegionStates() async throws(SQLiteError) -> [PersistedRegionState] {
        try await perform { (connection) throws(SQLiteError) in try connection.regionStates.load() }
    }

    public func storeRegionStates(_ states: [PersistedRegionState]) async throws(SQLiteError) {
        try await perform { (connection) throws(SQLiteError) in try connection.regionStates.save(states) }
    }
}
