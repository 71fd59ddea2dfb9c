import CSQLite

/// One SQLite connection. Not Sendable: the owner confines it to one serial queue (see `GatewayDatabase`).
/// The corresponding C functions are `sqlite3_open_v2` and `sqlite3_close_v2`.
public final class SQLiteDatabase {
    let handle: OpaquePointer
    public let path: String
    private var cache: [String: SQLiteStatement] = [:]

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, sql: nil, path: path)
        }
        sqlite3_extended_result_codes(db, 1)
        self.handle = db
        self.path = path
    }

    private var isClosed = false

    deinit { close() }

    /// Closes the connection now (cached statements first; in WAL mode SQLite checkpoints and removes the
    /// `-wal` and `-shm` files). Nothing may use it afterwards; a second call does nothing.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        let code = sqlite3_extended_errcode(handle)
        return SQLiteError(
            code: code == SQLITE_OK ? rc : code, message: String(cString: sqlite3_errmsg(handle)),
            sql: sql, path: path)
    }

    /// Runs one or more statements that return no rows we need. The corresponding C function is `sqlite3_exec`.
    public func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A prepared statement, cached by its SQL text.
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(database: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// The first column of the first row as an integer (nil when no row).
    public func scalar(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(at: 0) : nil
    }

    /// The first column of the first row as text (nil when no row).
    public func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.string(at: 0) : nil
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` ... `COMMIT`, rolling back when it throws.
    public func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Rows changed by the last statement. The corresponding C function is `sqlite3_changes`.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// `PRAGMA user_version`: the schema version.
    public var userVersion: Int {
        get throws(SQLiteError) { Int(try scalar("PRAGMA user_version") ?? 0) }
    }
}
