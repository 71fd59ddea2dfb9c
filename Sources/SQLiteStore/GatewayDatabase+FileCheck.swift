import BeaconDelivery
import BeaconRuntime
import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The file disappearing under the running process (docs/outbox.md, "The file disappears while running"): an
/// open SQLite handle keeps working on a deleted file (the rows are gone with the process) and fails on a
/// truncated one, so the publisher asks about every 2 s whether the path still names the open file.
extension GatewayDatabase: FileBackedOutbox {
    /// A lost file whose replacement could not be opened yet: what to carry into it once it opens.
    struct PendingReopen {
        var recovery: OutboxFileRecovery
        /// Outbox and dead-letter rows the lost file held.
        var held: Int
        var dropped: [OutboxDropReason: Int]
        /// The new database's sequence counter starts above this.
        var sequenceFloor: UInt64
        var reported: Bool
    }

    /// Compares the file at `path` with the one open (`stat`: device, inode, size). Deleted, replaced,
    /// shorter than before, or damaged (a statement failed with SQLITE_CORRUPT since the last check): copies what the open handle can still read (`VACUUM INTO`) to a new file, closes
    /// the old handle, moves a file found at the path aside (kept, `PATH.replaced-...`, `PATH.truncated-...`,
    /// `PATH.damaged-...`),
    /// puts the copy in its place (or a fresh database when nothing could be copied) and opens it, with the
    /// sequence counter above every number handed out and the old drop counts carried over; the events that
    /// could not be copied are counted as dropped (`file_lost`). Nil when the file is fine (or a failed
    /// reopen is still failing, already reported).
    public func verifyFile() async -> OutboxFileRecovery? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.checkFile(unixTime: SystemClock.realtime())) }
        }
    }

    /// On `queue`.
    func checkFile(unixTime: Double) -> OutboxFileRecovery? {
        if pendingReopen != nil { return reopen() }
        guard let connection else { return nil }
        let cause: OutboxFileRecovery.Cause
        if let current = DatabaseFile.identity(of: path) {
            guard let opened = connection.file else {
                connection.file = current
                return nil
            }
            if !current.isSameFile(as: opened) {
                cause = .replaced
            } else if current.size < opened.size {
                cause = .truncated
            } else if corruptionSeen {
                cause = .damaged
            } else {
                connection.file?.size = current.size
                return nil
            }
        } else if errno == ENOENT || errno == ENOTDIR {
            cause = .deleted
        } else {
            return nil
        }
        return recover(cause: cause, unixTime: unixTime)
    }

    /// On `queue`: copies, closes, swaps in the new file, reopens.
    private func recover(cause: OutboxFileRecovery.Cause, unixTime: Double) -> OutboxFileRecovery? {
        guard let old = connection else { return nil }
        corruptionSeen = false
        let held = old.outbox.rows + old.outbox.deadLetterCount
        var floor = highestReserved
        if let value = try? old.database.scalar("SELECT value FROM counters WHERE name = 'event_sequence'") {
            floor = max(floor, UInt64(max(0, value)))
        }
        let copy = path + ".recovering-\(getpid())"
        for name in [copy] + DatabaseFile.companions.map({ copy + $0 }) { unlink(name) }
        var copyError: String?
        do {
            let statement = try old.database.statement("VACUUM INTO ?")
            statement.bind(copy, at: 1)
            _ = try statement.step()
            statement.reset()
        } catch {
            copyError = error.description
            unlink(copy)
        }
        let dropped = old.outbox.dropped
        // Closed before anything is renamed: SQLite checkpoints into the old file and removes PATH-wal/-shm.
        connection = nil
        old.database.close()
        var movedAside: String?
        if access(path, F_OK) == 0 {
            movedAside = try? DatabaseFile.moveAside(path, unixTime: unixTime, label: cause.rawValue)
        }
        // Companions of the lost file must never be applied to the new one.
        if access(path, F_OK) != 0 { for suffix in DatabaseFile.companions { unlink(path + suffix) } }
        if copyError == nil {
            chmod(copy, 0o600)
            if rename(copy, path) != 0 {
                copyError = "cannot move the copy to \(path): \(DatabaseFile.describe(errno))"
                unlink(copy)
            }
        }
        pendingReopen = PendingReopen(
            recovery: OutboxFileRecovery(
                path: path, cause: cause, rowsCopied: 0, rowsLost: held, movedAside: movedAside, copyError: copyError),
            held: held, dropped: dropped, sequenceFloor: floor, reported: false)
        return reopen()
    }

    /// On `queue`: opens the database at `path` after a loss. Reports the first failure and the success.
    private func reopen() -> OutboxFileRecovery? {
        guard var pending = pendingReopen else { return nil }
        do throws(SQLiteError) {
            DatabaseFile.createPrivately(path)
            let fresh = try Connection(database: try SQLiteDatabase(path: path), settings: settings)
            try fresh.counter.raise(toAtLeast: pending.sequenceFloor)
            highestReserved = max(highestReserved, try fresh.counter.value())
            let kept = fresh.outbox.rows + fresh.outbox.deadLetterCount
            let lost = max(0, pending.held - kept)
            try fresh.outbox.setSinks(sinkNames)
            var dropped = pending.dropped
            if lost > 0 { dropped[.fileLost, default: 0] += lost }
            fresh.outbox.dropped = dropped
            connection = fresh
            closedReason = ""
            pendingReopen = nil
            var recovery = pending.recovery
            recovery.rowsCopied = kept
            recovery.rowsLost = lost
            recovery.openError = nil
            return recovery
        } catch {
            closedReason =
                "\(path) was \(pending.recovery.cause.rawValue) while running and a new database cannot be opened: "
                + error.description
            pending.recovery.openError = error.description
            defer {
                pending.reported = true
                pendingReopen = pending
            }
            return pending.reported ? nil : pending.recovery
        }
    }
}
