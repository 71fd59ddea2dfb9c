import CSQLite

/// A prepared statement. Not Sendable: used only on its database's queue.
/// The corresponding C functions are `sqlite3_prepare_v2`, `sqlite3_bind_*`, `sqlite3_step`, `sqlite3_column_*`.
public final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let database: SQLiteDatabase
    public let sql: String

    init(database: SQLiteDatabase, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(database.handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw database.error(rc, sql: sql)
        }
        self.handle = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    public func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(handle, index, value) }
    public func bind(_ value: Double, at index: Int32) { sqlite3_bind_double(handle, index, value) }
    public func bindNull(at index: Int32) { sqlite3_bind_null(handle, index) }

    public func bind(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { buffer in
            guard let base = buffer.baseAddress else {
                _ = sqlite3_bind_text(handle, index, "", 0, bb_sqlite_transient())
                return
            }
            _ = sqlite3_bind_text(
                handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                Int32(buffer.count), bb_sqlite_transient())
        }
    }

    /// Binds the UTF-8 bytes of `value` as a BLOB (so `length()` counts bytes).
    public func bindBlob(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 {
                _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), bb_sqlite_transient())
            } else {
                _ = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    /// Runs one step: true when a row is available.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Resets for the next use and clears bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    public func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    public func string(at column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// A BLOB (or TEXT) column decoded as UTF-8.
    public func blobString(at column: Int32) -> String {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let blob = sqlite3_column_blob(handle, column) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: blob, count: count), as: UTF8.self)
    }
}
