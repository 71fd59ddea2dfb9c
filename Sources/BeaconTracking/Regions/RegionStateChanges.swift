/// Rows the caller must persist, collected between two `takeStateChanges()` calls (last write per pair wins).
struct RegionStateChanges: Sendable {
    private struct Key: Hashable, Sendable {
        var region: String
        var beaconID: String
    }
    private var rows: [Key: PersistedRegionState] = [:]

    package var isEmpty: Bool { rows.isEmpty }

    package mutating func record(_ row: PersistedRegionState) {
        rows[Key(region: row.region, beaconID: row.beaconID)] = row
    }

    /// The collected rows in (region, beacon id) order, and empties the log.
    package mutating func take() -> [PersistedRegionState] {
        let result = rows.values.sorted { ($0.region, $0.beaconID) < ($1.region, $1.beaconID) }
        rows = [:]
        return result
    }
}
