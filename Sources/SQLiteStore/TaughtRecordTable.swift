/// The `taught` table (issue 43): every taught record the gateway accepted, its own and the site's other
/// gateways', as the JSON it was published with, by its retained topic. The daemon reads and checks them again at
/// start (`TaughtRecord.parse`), so a row a newer configuration no longer fits is refused there, not trusted.
struct TaughtRecordTable {
    let database: SQLiteDatabase

    func load() throws(SQLiteError) -> [StoredTaughtRecord] {
        let statement = try database.statement("SELECT topic, payload, recorded FROM taught ORDER BY topic")
        defer { statement.reset() }
        var out: [StoredTaughtRecord] = []
        while try statement.step() {
            out.append(
                StoredTaughtRecord(
                    topic: statement.string(at: 0), payload: statement.string(at: 1),
                    recorded: statement.double(at: 2)))
        }
        return out
    }

    func save(_ record: StoredTaughtRecord) throws(SQLiteError) {
        let statement = try database.statement(
            """
            INSERT INTO taught (topic, payload, recorded) VALUES (?, ?, ?)
            ON CONFLICT (topic) DO UPDATE SET payload = excluded.payload, recorded = excluded.recorded
            """)
        defer { statement.reset() }
        statement.bind(record.topic, at: 1)
        statement.bind(record.payload, at: 2)
        statement.bind(record.recorded, at: 3)
        try statement.step()
    }

    /// Removes the record on `topic`; whether there was one.
    func delete(topic: String) throws(SQLiteError) -> Bool {
        let statement = try database.statement("DELETE FROM taught WHERE topic = ?")
        defer { statement.reset() }
        statement.bind(topic, at: 1)
        try statement.step()
        return database.changes > 0
    }
}

/// One row of the `taught` table: a taught record's retained topic, its JSON and its capture time.
public struct StoredTaughtRecord: Sendable, Equatable {
    public var topic: String
    public var payload: String
    public var recorded: Double

    public init(topic: String, payload: String, recorded: Double) {
        self.topic = topic
        self.payload = payload
        self.recorded = recorded
    }
}

extension GatewayDatabase {
    /// Every stored taught record (`taught`), by topic.
    public func loadTaughtRecords() throws -> [StoredTaughtRecord] {
        try performSync { (connection) throws(SQLiteError) in try connection.taught.load() }
    }

    /// As `loadTaughtRecords`, resuming the caller instead of blocking its thread.
    public func storedTaughtRecords() async throws(SQLiteError) -> [StoredTaughtRecord] {
        try await perform { (connection) throws(SQLiteError) in try connection.taught.load() }
    }

    public func storeTaughtRecord(_ record: StoredTaughtRecord) async throws(SQLiteError) {
        try await perform { (connection) throws(SQLiteError) in try connection.taught.save(record) }
    }

    /// Removes the record on `topic`; whether there was one.
    @discardableResult
    public func removeTaughtRecord(topic: String) async throws(SQLiteError) -> Bool {
        try await perform { (connection) throws(SQLiteError) in try connection.taught.delete(topic: topic) }
    }
}
