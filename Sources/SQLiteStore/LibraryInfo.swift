import CSQLite

/// The SQLite adapter: outbox, region state store and sequence counter.
public enum SQLiteLibrary {
    /// The corresponding C function is `sqlite3_libversion_number`.
    public static var versionNumber: Int { Int(sqlite3_libversion_number()) }
}
