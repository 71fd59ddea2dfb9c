import BeaconDelivery
import BeaconEvents
import BeaconRuntime
import CSQLite
import Dispatch

/// The gateway's SQLite database: outbox, region state and sequence counter in one WAL-mode file.
///
/// All SQLite work runs on one private serial dispatch queue, never on the cooperative thread pool: the async
/// methods (and `open(settings:)`) hop onto it and resume the caller when done; `init(settings:)` and the
/// `RegionStateStore` methods (a synchronous contract) wait for it with `queue.sync`, so they are for threads
/// that may block (the main thread of a command, a `DedicatedThread`), never for a task.
///
/// `@unchecked Sendable`: the invariant is that `connection` (the SQLite handle and everything holding it) and
/// the other `var`s are only touched from blocks running on `queue`. The connection is replaced when the file
/// is deleted, truncated or replaced under the process (`verifyFile()`, GatewayDatabase+FileCheck.swift).
public final class GatewayDatabase: @unchecked Sendable {
    /// Everything that holds the SQLite handle. `@unchecked Sendable` only so blocks can carry it to `queue`:
    /// it is used exclusively from blocks running on `queue`.
    final class Connection: @unchecked Sendable {
        let database: SQLiteDatabase
        let outbox: Outbox
        let counter: SequenceCounter
        let regionStates: RegionStateTable
        let deviceKeys: DeviceKeyTable
        let taught: TaughtRecordTable
        /// The file as it was at open, grown to the largest size seen since (a smaller file was truncated).
        var file: DatabaseFile.FileIdentity?

        init(database: SQLiteDatabase, settings: OutboxSettings) throws(SQLiteError) {
            self.database = database
            try database.execute("PRAGMA busy_timeout = 5000")
            guard try database.text("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                throw SQLiteError(
                    code: SQLITE_ERROR, message: "cannot switch to WAL journal mode",
                    sql: "PRAGMA journal_mode = WAL", path: database.path)
            }
            try database.execute("PRAGMA synchronous = \(settings.synchronous == "full" ? "FULL" : "NORMAL")")
            try StoreSchema.migrate(database)
            self.counter = SequenceCounter(database: database)
            try counter.raiseToWallClock(SystemClock.realtime())
            try counter.catchUp()
            self.outbox = try Outbox(database: database, maxRows: settings.maxRows, maxBytes: settings.maxBytes)
            self.regionStates = RegionStateTable(database: database)
            self.deviceKeys = DeviceKeyTable(database: database)
            self.taught = TaughtRecordTable(database: database)
            self.file = DatabaseFile.identity(of: settings.path)
        }
    }

    let queue: DispatchQueue
    /// Nil only after the file was lost and a new one could not be opened yet (`verifyFile()` retries).
    var connection: Connection?
    /// Why `connection` is nil.
    var closedReason = ""
    /// The database's sequence counter as last seen: at open, and after every reservation (carried into a
    /// replacement database, and the floor of numbers handed out while the database fails).
    var highestReserved: UInt64 = 0
    /// A statement failed with SQLITE_CORRUPT/NOTADB since the last file check (the file was damaged under us).
    var corruptionSeen = false
    /// A lost file whose replacement could not be opened yet (`verifyFile()` tries again).
    var pendingReopen: PendingReopen?
    let settings: OutboxSettings
    public let path: String
    /// The configured sinks (`setSinks`), applied again to a connection opened after a file loss.
    var sinkNames: [String] = [Outbox.primarySink]

    /// Opens or creates the database at `settings.path` and migrates it. Throws `SQLiteError` with a clear
    /// message for a damaged file (`isCorrupt`), a full disk (`isDiskFull`) or an unreadable path. A new file
    /// is created with mode 0600 whatever the umask (and its `-wal`/`-shm` files get the same mode).
    /// Blocks the calling thread while SQLite opens and migrates the file: from a task, use `open(settings:)`.
    public convenience init(settings: OutboxSettings) throws(SQLiteError) {
        let queue = DispatchQueue(label: "beaconbridge.sqlite")
        let result = queue.sync { Self.connect(settings) }
        self.init(queue: queue, opened: try result.get(), settings: settings)
    }

    /// Opens the database like `init(settings:)`, on the database's own queue, resuming the caller when done:
    /// no thread of the cooperative pool waits for SQLite's open and migration (the `outbox` command).
    public static func open(settings: OutboxSettings) async throws(SQLiteError) -> GatewayDatabase {
        let queue = DispatchQueue(label: "beaconbridge.sqlite")
        let result = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: connect(settings)) }
        }
        return GatewayDatabase(queue: queue, opened: try result.get(), settings: settings)
    }

    /// The open connection and its sequence counter's value.
    private struct Opened: Sendable {
        let connection: Connection
        let highestReserved: UInt64
    }

    /// Creates the file if needed, opens and migrates it, reads the counter (on the new database's queue).
    private static func connect(_ settings: OutboxSettings) -> Result<Opened, SQLiteError> {
        do throws(SQLiteError) {
            DatabaseFile.createPrivately(settings.path)
            let database = try SQLiteDatabase(path: settings.path)
            let connection = try Connection(database: database, settings: settings)
            return .success(Opened(connection: connection, highestReserved: (try? connection.counter.value()) ?? 0))
        } catch {
            return .failure(error)
        }
    }

    private init(queue: DispatchQueue, opened: Opened, settings: OutboxSettings) {
        self.queue = queue
        self.connection = opened.connection
        self.highestReserved = opened.highestReserved
        self.settings = settings
        self.path = settings.path
    }

    /// A damaged database file that was moved aside at open.
    public struct MovedAside: Sendable, Equatable {
        /// Where the damaged file is now (`PATH.damaged-YYYYMMDDTHHMMSSZ`, its `-wal`/`-shm` beside it).
        public var path: String
        /// What opening it reported.
        public var error: String
    }

    /// Opens the database like `init(settings:)`; when the file is damaged or not a database (`isCorrupt`) it
    /// is moved aside (kept, renamed with the time `unixTime`) and a fresh database is created in its place.
    /// Any other failure (disk full, a newer schema, permissions) throws, and so does a failure of the fresh one.
    public static func openMovingAsideDamaged(settings: OutboxSettings, unixTime: Double) throws(SQLiteError)
        -> (database: GatewayDatabase, movedAside: MovedAside?)
    {
        if DatabaseFile.lacksDatabaseHeader(settings.path) {
            // Not a database at all: moved before SQLite touches it (or its -wal file).
            let target = try DatabaseFile.moveAside(settings.path, unixTime: unixTime)
            return (
                try GatewayDatabase(settings: settings),
                MovedAside(path: target, error: "\(settings.path): not an SQLite database (no SQLite header)")
            )
        }
        do {
            return (try GatewayDatabase(settings: settings), nil)
        } catch  where error.isCorrupt {
            let target = try DatabaseFile.moveAside(settings.path, unixTime: unixTime)
            return (try GatewayDatabase(settings: settings), MovedAside(path: target, error: error.description))
        }
    }

    /// Runs `body` on the database queue and resumes with its result.
    func perform<T: Sendable>(_ body: @escaping @Sendable (Connection) throws(SQLiteError) -> T)
        async throws(SQLiteError) -> T
    {
        let result: Result<T, SQLiteError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(SQLiteError) {
                    continuation.resume(returning: .success(try body(try self.openConnection())))
                } catch {
                    if error.isCorrupt { self.corruptionSeen = true }
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Runs `body` on the database queue, blocking the caller (for the synchronous contracts).
    func performSync<T>(_ body: (Connection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let result: Result<T, SQLiteError> = queue.sync {
            do throws(SQLiteError) { return .success(try body(try openConnection())) } catch {
                if error.isCorrupt { corruptionSeen = true }
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reserves `count` sequence numbers, committed before they are returned, all above `floor` (the highest
    /// number this process handed out otherwise, e.g. from the wall clock while the database failed), so the
    /// sequence never goes backwards.
    public func reserveSequences(_ count: Int = 1024, above floor: UInt64 = 0) async throws(SQLiteError)
        -> SequenceBlock
    {
        try await perform { (connection) throws(SQLiteError) in
            if floor > 0 { try connection.counter.raise(toAtLeast: floor) }
            let block = try connection.counter.reserve(count)
            self.highestReserved = max(self.highestReserved, block.end - 1)
            return SequenceBlock(first: block.first, end: block.end)
        }
    }

    /// The open connection (on `queue`), or the error saying why there is none.
    func openConnection() throws(SQLiteError) -> Connection {
        guard let connection else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "the database is not open: \(closedReason)", path: path)
        }
        return connection
    }

    /// The highest sequence number the database's counter has handed out or been raised to, as last seen
    /// (no SQL: known even while the database fails). Numbers handed out without the database (from the wall
    /// clock) start above it.
    public func sequenceFloor() async -> UInt64 {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.highestReserved) }
        }
    }

    /// Runs raw SQL on the queue: maintenance and tests (e.g. `PRAGMA max_page_count`).
    public func execute(_ sql: String) async throws(SQLiteError) {
        try await perform { (connection) throws(SQLiteError) in try connection.database.execute(sql) }
    }
}

extension GatewayDatabase {
    /// `PRAGMA page_count`: pages in the file.
    public func pageCount() async throws(SQLiteError) -> Int {
        try await perform { (connection) throws(SQLiteError) in
            Int(try connection.database.scalar("PRAGMA page_count") ?? 0)
        }
    }
}
