import CSQLite

/// An SQLite failure: the result code, SQLite's message and the statement that failed.
public struct SQLiteError: Error, Equatable, CustomStringConvertible {
    /// Extended result code (`sqlite3_extended_errcode`); the primary code is `code & 0xFF`.
    public var code: Int32
    public var message: String
    public var sql: String?
    /// The database file, when known.
    public var path: String?

    public init(code: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.path = path
    }

    public var primaryCode: Int32 { code & 0xFF }

    /// The disk (or `max_page_count`) is full: SQLITE_FULL.
    public var isDiskFull: Bool { primaryCode == SQLITE_FULL }

    /// The file is damaged or is not a database: SQLITE_CORRUPT or SQLITE_NOTADB.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public var description: String {
        var text = "SQLite error \(code) (\(String(cString: sqlite3_errstr(code))))"
        if let path { text += " on \(path)" }
        text += ": \(message)"
        if isDiskFull { text += " [disk full: new events are kept in memory until it takes writes again]" }
        if isCorrupt { text += " [database file is damaged or not a database: move it aside to start a new one]" }
        if let sql { text += " in `\(sql)`" }
        return text
    }
}
