import Synchronization

/// A `RegionStateStore` in memory, for tests and the simulator. Thread-safe through a `Mutex`.
public final class InMemoryRegionStateStore: RegionStateStore {
    private struct Key: Hashable {
        var region: String
        var beaconID: String
    }
    private let rows = Mutex<[Key: PersistedRegionState]>([:])

    public init(_ initial: [PersistedRegionState] = []) {
        rows.withLock { rows in
            for row in initial { rows[Key(region: row.region, beaconID: row.beaconID)] = row }
        }
    }

    public func loadRegionStates() throws -> [PersistedRegionState] {
        rows.withLock { $0.values.sorted { ($0.region, $0.beaconID) < ($1.region, $1.beaconID) } }
    }

    public func saveRegionStates(_ states: [PersistedRegionState]) throws {
        rows.withLock { rows in
            for row in states { rows[Key(region: row.region, beaconID: row.beaconID)] = row }
        }
    }

    public func deleteRegionStates(_ keys: [(region: String, beaconID: String)]) throws {
        rows.withLock { rows in
            for key in keys { rows[Key(region: key.region, beaconID: key.beaconID)] = nil }
        }
    }

    /// Rows held now.
    public var count: Int { rows.withLock { $0.count } }
}
