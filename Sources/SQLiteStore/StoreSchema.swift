/// Versioned schema migrations, tracked in `PRAGMA user_version` (docs/outbox.md describes the tables).
/// Migration N (1-based) brings the schema from version N-1 to N; existing migrations are never edited.
enum StoreSchema {
    static let migrations: [String] = [
        // 1: outbox, region state, counters.
        """
        CREATE TABLE outbox (
            seq INTEGER PRIMARY KEY,
            gateway TEXT NOT NULL,
            kind TEXT NOT NULL,
            expires INTEGER NOT NULL,
            topic TEXT NOT NULL,
            qos INTEGER NOT NULL,
            retain INTEGER NOT NULL,
            payload BLOB NOT NULL,
            capture_time REAL NOT NULL,
            created REAL NOT NULL
        );
        CREATE INDEX outbox_expiring ON outbox (seq) WHERE expires = 1;
        CREATE TABLE region_state (
            region TEXT NOT NULL,
            beacon_id TEXT NOT NULL,
            state TEXT NOT NULL,
            since REAL NOT NULL,
            last_qualifying REAL NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (region, beacon_id)
        ) WITHOUT ROWID;
        CREATE TABLE counters (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO counters (name, value) VALUES ('event_sequence', 0);
        """,
        // 2: devices resolved through their identity resolving keys (byte order matched, last heard; never the key).
        """
        CREATE TABLE device_keys (
            name TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            byte_order TEXT NOT NULL,
            last_seen REAL NOT NULL
        ) WITHOUT ROWID;
        """,
        // 3: events the broker refused, moved out of the outbox so the rows behind them flow.
        """
        CREATE TABLE dead_letter (
            seq INTEGER PRIMARY KEY,
            gateway TEXT NOT NULL,
            kind TEXT NOT NULL,
            expires INTEGER NOT NULL,
            topic TEXT NOT NULL,
            qos INTEGER NOT NULL,
            retain INTEGER NOT NULL,
            payload BLOB NOT NULL,
            capture_time REAL NOT NULL,
            reason TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            dead_at REAL NOT NULL
        );
        """,
        // 4: the last accepted BTHome encryption counter per device, so a replayed frame stays a duplicate
        // after a restart.
        """
        CREATE TABLE encryption_counters (
            beacon_id TEXT PRIMARY KEY,
            counter INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 5: a cursor per sink (docs/outbox.md, "Sinks"). A row stays in `outbox` until every configured sink
        // has acknowledged it; `outbox_ack` holds the acknowledgements of rows still waiting for another sink.
        // The rows of a version-4 file were acknowledged by nobody: every sink sends them, nothing is lost.
        """
        CREATE TABLE outbox_ack (
            seq INTEGER NOT NULL,
            sink TEXT NOT NULL,
            PRIMARY KEY (seq, sink)
        ) WITHOUT ROWID;
        CREATE TRIGGER outbox_ack_cleanup AFTER DELETE ON outbox
            BEGIN DELETE FROM outbox_ack WHERE seq = OLD.seq; END;
        """,
        // 6: what was taught (issue 43; docs/teach.md): one record per retained topic, its JSON as published
        // (`TaughtRecord`), read and checked again at every start.
        """
        CREATE TABLE taught (
            topic TEXT PRIMARY KEY,
            payload TEXT NOT NULL,
            recorded REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    ]

    static var currentVersion: Int { migrations.count }

    /// Applies the pending migrations, each in its own transaction.
    static func migrate(_ database: SQLiteDatabase) throws(SQLiteError) {
        let version = try database.userVersion
        guard version <= currentVersion else {
            throw SQLiteError(
                code: 1, message: "schema version \(version) is newer than this gateway knows (\(currentVersion))",
                sql: "PRAGMA user_version", path: database.path)
        }
        for target in (version + 1)...max(version + 1, currentVersion) where target <= currentVersion {
            try database.transaction { () throws(SQLiteError) in
                try database.execute(migrations[target - 1])
                try database.execute("PRAGMA user_version = \(target)")
            }
        }
    }
}
