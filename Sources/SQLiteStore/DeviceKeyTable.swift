import BeaconFormats

/// The `device_keys` table: for each configured device that resolved an address, the key's fingerprint, the
/// byte order that matched and when it was last heard. Read by `check-config` and `keys check`.
struct DeviceKeyTable {
    let database: SQLiteDatabase

    func load() throws(SQLiteError) -> [SeenDeviceKey] {
        let statement = try database.statement(
            "SELECT name, fingerprint, byte_order, last_seen FROM device_keys ORDER BY name")
        defer { statement.reset() }
        var out: [SeenDeviceKey] = []
        while try statement.step() {
            guard let order = KeyByteOrder(name: statement.string(at: 2)) else { continue }  // a damaged row
            out.append(
                SeenDeviceKey(
                    name: statement.string(at: 0), fingerprint: statement.string(at: 1), order: order,
                    lastSeen: statement.double(at: 3)))
        }
        return out
    }

    func save(_ rows: [SeenDeviceKey]) throws(SQLiteError) {
        guard !rows.isEmpty else { return }
        try database.transaction { () throws(SQLiteError) in
            let statement = try database.statement(
                """
                INSERT INTO device_keys (name, fingerprint, byte_order, last_seen) VALUES (?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, byte_order = excluded.byte_order,
                    last_seen = MAX(excluded.last_seen, CASE WHEN fingerprint = excluded.fingerprint THEN last_seen ELSE 0 END)
                """)
            for row in rows {
                statement.bind(row.name, at: 1)
                statement.bind(row.fingerprint, at: 2)
                statement.bind(row.order.name, at: 3)
                statement.bind(row.lastSeen, at: 4)
                try statement.step()
                statement.reset()
            }
        }
    }
}

extension GatewayDatabase {
    /// Devices seen through their keys (`device_keys`).
    public func loadSeenDeviceKeys() throws -> [SeenDeviceKey] {
        try performSync { (connection) throws(SQLiteError) in try connection.deviceKeys.load() }
    }

    public func saveSeenDeviceKeys(_ rows: [SeenDeviceKey]) throws {
        try performSync { (connection) throws(SQLiteError) in try connection.deviceKeys.save(rows) }
    }

    /// As `loadSeenDeviceKeys` / `saveSeenDeviceKeys`, resuming the caller instead of blocking its thread.
    public func storedSeenDeviceKeys() async throws(SQLiteError) -> [SeenDeviceKey] {
        try await perform { (connection) throws(SQLiteError) in try connection.deviceKeys.load() }
    }

    public func storeSeenDeviceKeys(_ rows: [SeenDeviceKey]) async throws(SQLiteError) {
        try await perform { (connection) throws(SQLiteError) in try connection.deviceKeys.save(rows) }
    }
}
