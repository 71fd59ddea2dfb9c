import BeaconCore

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
