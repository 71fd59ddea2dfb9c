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
            throw SQLiteError(
                code: 1, message: "counter event_sequence missing", sql: statement.sql, path: database.path)
        }
        let last = UInt64(max(0, statement.int64(at: 0)))
        _ = try statement.step()
        return (last - UInt64(count) + 1, last + 1)
    }

    /// Moves the counter past every number a run without a usable database can have handed out: such a run
    /// numbers events from the wall clock in microseconds (and so does a database created later, after the
    /// old one was damaged and moved aside, or lost), so at every open the counter is raised to at least the
    /// wall clock in microseconds; it is never lowered. Stays below 2^53 (exact in JSON) until the year 2255.
    func raiseToWallClock(_ wallClock: Double) throws(SQLiteError) {
        try raise(toAtLeast: UInt64(max(0, wallClock) * 1_000_000))
    }

    /// The highest number reserved (or raised to) so far.
    func value() throws(SQLiteError) -> UInt64 {
        UInt64(max(0, try database.scalar("SELECT value FROM counters WHERE name = 'event_sequence'") ?? 0))
    }

    /// Raises the counter so that the next number reserved is above `value` (never lowers it).
    func raise(toAtLeast value: UInt64) throws(SQLiteError) {
        let statement = try database.statement(
            "UPDATE counters SET value = max(value, ?) WHERE name = 'event_sequence'")
        defer { statement.reset() }
        statement.bind(Int64(clamping: value), at: 1)
        try statement.step()
    }

    /// Raises the counter to at least the highest sequence stored in the outbox (a repair for copied or
    /// hand-edited files).
    func catchUp() throws(SQLiteError) {
        try database.execute(
            """
            UPDATE counters SET value = max(value, (SELECT coalesce(max(seq), 0) FROM outbox),
                                            (SELECT coalesce(max(seq), 0) FROM dead_letter))
            WHERE name = 'event_sequence'
            """)
    }
}
