/// The per-gateway event sequence, kept in the `counters` table. Numbers are reserved in blocks that are
/// committed before use, so a crash can leave a gap but never hands out a number twice.
struct SequenceCounter {
    let database: SQLiteDatabase

    /// Reserves `count` numbers: returns the block `first ..< first + count`.
    func reserve(_ count: Int) throws(SQLiteError) -> (first: UInt64, end: UInt64) {
        precondition(count > 0, "reserve at least one number")
        let statement = try database.statement(
            "UPDATE counters SET value = value + ? WHERE name = 'event_sequence' RETURNING value")
        defer { statement.reset() }
        statement.bind(Int64(count), at: 1)
        guard try statement.step() else {
            throw SQLiteError(code: 1, message: "counter event_sequence missing", sql: statement.sql, path: database.path)
        }
        let last = UInt64(max(0, statement.int64(at: 0)))
        _ = try statement.step()
        return (last - UInt64(count) + 1, last + 1)
    }

    /// Seeds a fresh counter (value 0) with the wall clock in microseconds, so a database created later (the old
    /// one was damaged and moved aside, or lost) still continues above every number handed out before, as
    /// does the wall-clock fallback a daemon uses without a database. Stays below 2^53 (exact in JSON) until
    /// the year 2255.
    func seedIfFresh(wallClock: Double) throws(SQLiteError) {
        let statement = try database.statement(
            "UPDATE counters SET value = ? WHERE name = 'event_sequence' AND value = 0")
        defer { statement.reset() }
        statement.bind(Int64(wallClock * 1_000_000), at: 1)
        try statement.step()
    }

    /// Raises the counter to at least the highest sequence stored in the outbox (a repair for copied or
    /// hand-edited files).
    func catchUp() throws(SQLiteError) {
        try database.execute("""
            UPDATE counters SET value = max(value, (SELECT coalesce(max(seq), 0) FROM outbox))
            WHERE name = 'event_sequence'
            """)
    }
}
