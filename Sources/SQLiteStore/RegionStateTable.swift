import BeaconModel
import BeaconTracking

/// The `region_state` table: the region engine's state that survives restarts.
struct RegionStateTable {
    let database: SQLiteDatabase

    func load() throws(SQLiteError) -> [PersistedRegionState] {
        let statement = try database.statement(
            "SELECT region, beacon_id, state, since, last_qualifying, updated FROM region_state ORDER BY region, beacon_id"
        )
        defer { statement.reset() }
        var out: [PersistedRegionState] = []
        while try statement.step() {
            let stateText = statement.string(at: 2)
            out.append(
                PersistedRegionState(
                    region: statement.string(at: 0), beaconID: statement.string(at: 1),
                    state: RegionState(rawValue: stateText) ?? .unknown, since: statement.double(at: 3),
                    lastQualifying: statement.double(at: 4), updated: statement.double(at: 5)))
        }
        return out
    }

    func save(_ states: [PersistedRegionState]) throws(SQLiteError) {
        guard !states.isEmpty else { return }
        try database.transaction { () throws(SQLiteError) in
            let statement = try database.statement(
                """
                INSERT INTO region_state (region, beacon_id, state, since, last_qualifying, updated)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (region, beacon_id) DO UPDATE SET state = excluded.state, since = excluded.since,
                    last_qualifying = excluded.last_qualifying, updated = excluded.updated
                """)
            for state in states {
                statement.bind(state.region, at: 1)
                statement.bind(state.beaconID, at: 2)
                statement.bind(state.state.rawValue, at: 3)
                statement.bind(state.since, at: 4)
                statement.bind(state.lastQualifying, at: 5)
                statement.bind(state.updated, at: 6)
                try statement.step()
                statement.reset()
            }
        }
    }

    func delete(_ keys: [(region: String, beaconID: String)]) throws(SQLiteError) {
        guard !keys.isEmpty else { return }
        try database.transaction { () throws(SQLiteError) in
            let statement = try database.statement("DELETE FROM region_state WHERE region = ? AND beacon_id = ?")
            for key in keys {
                statement.bind(key.region, at: 1)
                statement.bind(key.beaconID, at: 2)
                try statement.step()
                statement.reset()
            }
        }
    }
}
