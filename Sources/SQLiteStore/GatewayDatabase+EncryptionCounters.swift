import BeaconModel

/// The `encryption_counters` table: the last accepted BTHome `encryption_counter` per beacon id (only devices
/// with a configured bind key have one, so it is as small as `formats.bthome_keys`).
extension GatewayDatabase {
    /// Every saved counter, beacon id -> counter.
    public func loadEncryptionCounters() throws -> [String: Int64] {
        try performSync { (connection) throws(SQLiteError) in try Self.readCounters(connection) }
    }

    /// Saves counters; a saved counter never goes down.
    public func saveEncryptionCounters(_ counters: [String: Int64]) throws {
        guard !counters.isEmpty else { return }
        try performSync { (connection) throws(SQLiteError) in try Self.writeCounters(counters, connection) }
    }

    /// As `loadEncryptionCounters` / `saveEncryptionCounters`, resuming the caller instead of blocking its thread.
    public func storedEncryptionCounters() async throws(SQLiteError) -> [String: Int64] {
        try await perform { (connection) throws(SQLiteError) in try Self.readCounters(connection) }
    }

    public func storeEncryptionCounters(_ counters: [String: Int64]) async throws(SQLiteError) {
        guard !counters.isEmpty else { return }
        try await perform { (connection) throws(SQLiteError) in try Self.writeCounters(counters, connection) }
    }

    private static func readCounters(_ connection: Connection) throws(SQLiteError) -> [String: Int64] {
        let statement = try connection.database.statement("SELECT beacon_id, counter FROM encryption_counters")
        defer { statement.reset() }
        var out: [String: Int64] = [:]
        while try statement.step() { out[statement.string(at: 0)] = statement.int64(at: 1) }
        return out
    }

    private static func writeCounters(_ counters: [String: Int64], _ connection: Connection) throws(SQLiteError) {
        let database = connection.database
        try database.transaction { () throws(SQLiteError) in
            let statement = try database.statement(
                """
                INSERT INTO encryption_counters (beacon_id, counter) VALUES (?, ?)
                ON CONFLICT (beacon_id) DO UPDATE SET counter = MAX(counter, excluded.counter)
                """)
            for (beaconID, counter) in counters.sorted(by: { $0.key < $1.key }) {
                statement.bind(beaconID, at: 1)
                statement.bind(counter, at: 2)
                try statement.step()
                statement.reset()
            }
        }
    }
}
