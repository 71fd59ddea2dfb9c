/// An outbox kept in a file that can be deleted, truncated or replaced under the running process
/// (docs/outbox.md, "The file disappears while running"). The publisher asks it about every 2 s, on its tick.
public protocol FileBackedOutbox: EventOutbox {
    /// Checks that the file at the outbox's path is still the one open (same device and inode, not shrunk,
    /// not found damaged); when it is not, copies what the open handle still holds into a new database at the
    /// path, reopens it and returns what happened. Nil when the file is fine.
    func verifyFile() async -> OutboxFileRecovery?
}

/// What `FileBackedOutbox.verifyFile()` found and did.
public struct OutboxFileRecovery: Sendable, Equatable {
    public enum Cause: String, Sendable, Equatable {
        /// No file at the path any more (deleted or renamed away).
        case deleted
        /// Another file at the path (a different device or inode).
        case replaced
        /// The same file, shorter than it was (truncate(2)): its pages are gone.
        case truncated
        /// The same file, but SQLite found it damaged (SQLITE_CORRUPT) while running.
        case damaged
    }
    public var path: String
    public var cause: Cause
    /// Events (outbox and dead-letter rows) the new database holds, copied from the open handle.
    public var rowsCopied: Int
    /// Events the old file held that could not be copied: counted as dropped (`file_lost`).
    public var rowsLost: Int
    /// Where the file found at the path was moved (kept), when one was there.
    public var movedAside: String?
    /// Why copying failed, when it did (the new database then starts empty).
    public var copyError: String?
    /// Why the new database could not be opened, when it could not (tried again on the next check).
    public var openError: String?

    public init(
        path: String, cause: Cause, rowsCopied: Int, rowsLost: Int, movedAside: String? = nil,
        copyError: String? = nil, openError: String? = nil
    ) {
        self.path = path
        self.cause = cause
        self.rowsCopied = rowsCopied
        self.rowsLost = rowsLost
        self.movedAside = movedAside
        self.copyError = copyError
        self.openError = openError
    }
}
