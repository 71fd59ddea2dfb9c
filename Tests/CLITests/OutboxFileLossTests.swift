import BeaconModel
import Foundation
import SQLiteStore
import TestSupport
import Testing

/// Issue 17.5, while running: the outbox file deleted, or truncated to 0 bytes, under the running gateway (the
/// built binary fed through a socket pair, a real mosquitto that is down meanwhile, the real file). The gateway
/// notices within seconds, logs an error naming the path, copies what its open handle still holds into a new
/// database at the path, and goes on: every event it accepted is delivered once the broker is back, or counted
/// as dropped (`file_lost`), and sequence numbers keep increasing.
@Suite(.serialized) struct OutboxFileLossTests {
    enum Damage { case delete, truncate }

    struct Outcome {
        var before: Set<UInt64>
        var recovered: Set<UInt64>
        var delivered: Set<UInt64>
        var rowsLost: Int
        var rowsCopied: Int
        var dropped: Int
        var log: String
    }

    @Test(.timeLimit(.minutes(5))) func aFileDeletedWhileTheBrokerIsDownIsRecreatedWithEveryEvent() async throws {
        let outcome = try await run(.delete)
        // The open handle still reads the deleted file: everything is copied, nothing lost.
        #expect(outcome.rowsLost == 0, "\(outcome.log)")
        #expect(outcome.before.isSubset(of: outcome.recovered), "\(outcome.log)")
        #expect(outcome.before.isSubset(of: outcome.delivered))
        #expect(outcome.dropped == 0, "\(outcome.log)")
    }

    @Test(.timeLimit(.minutes(5))) func aFileTruncatedWhileTheBrokerIsDownIsRecreatedAndTheLossCounted() async throws {
        let outcome = try await run(.truncate)
        // Checkpointed, then truncated: the stored rows are gone; each one not copied is counted as dropped.
        let missing = outcome.before.subtracting(outcome.delivered)
        #expect(!missing.isEmpty, "the truncation destroyed rows (else this test tests nothing)")
        #expect(outcome.rowsLost >= missing.count, "\(outcome.log)")
        #expect(outcome.dropped == outcome.rowsLost, "\(outcome.log)")
        let warned = outcome.log.split(separator: "\n").contains {
            $0.contains("level=warning") && $0.contains("msg=\"events dropped\"") && $0.contains("reason=file_lost")
                && $0.contains("count=\(outcome.rowsLost)")
        }
        #expect(warned, "\(outcome.log)")
    }

    func run(_ damage: Damage) async throws -> Outcome {
        let bed = try DaemonTestBed(persistentBroker: true)
        try await bed.broker.start()
        let subscriber = try TestSubscriber(
            port: bed.broker.port, patterns: ["beaconbridge/#"], persistentID: "fileloss-\(damage)")
        try await subscriber.start()
        bed.broker.stop()
        try bed.writeConfig(
            """
              sighting_max_age_s: 3600
            scanner:
              stall_timeout_s: 0

            """)
        let (daemon, feed) = try bed.startFedDaemon()
        defer {
            daemon.signal(SIGKILL)
            feed.close()
        }
        try feed.sendIBeacons(minors: 1...10)
        try await waitUntil("the first events stored", timeout: 60) {
            (try? Self.storedSequences(bed.outboxPath).count) ?? 0 >= 10
        }
        let original = try #require(Self.inode(bed.outboxPath))
        // `before`: what the file held a moment before the damage (the gateway may add more meanwhile).
        let before: Set<UInt64>
        switch damage {
        case .delete:
            before = try Self.storedSequences(bed.outboxPath)
            #expect(unlink(bed.outboxPath) == 0)
        case .truncate:
            // Pages out of the WAL into the file first, so that truncating it destroys stored rows.
            try await Self.checkpoint(bed.outboxPath)
            before = try Self.storedSequences(bed.outboxPath)
            #expect(truncate(bed.outboxPath, 0) == 0)
        }
        let cause = damage == .delete ? "deleted" : "truncated"
        let message = "the outbox database file was \(cause) while running"
        try await waitUntil("the loss noticed and logged", timeout: 60) { daemon.stderr.contains(message) }
        let log = daemon.stderr
        #expect(log.contains("level=error"), "\(log)")
        #expect(logValue(log, message: message, key: "path") == bed.outboxPath, "\(log)")
        let rowsLost = try #require(logValue(log, message: message, key: "rows_lost").flatMap { Int($0) })
        let rowsCopied = try #require(logValue(log, message: message, key: "rows_copied").flatMap { Int($0) })
        // A new, private file is in place (for a deletion: another inode).
        let attributes = try FileManager.default.attributesOfItem(atPath: bed.outboxPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        if damage == .delete { #expect(Self.inode(bed.outboxPath) != original) }

        // Accepted after the loss: stored in the new file, numbered above everything before.
        try feed.sendIBeacons(minors: 11...20)
        let afterMinors = Set((11...20).map { bed.beaconID(minor: $0) })
        try await waitUntil("the later events stored", timeout: 60) {
            let stored = (try? Self.storedSequences(bed.outboxPath)) ?? []
            return stored.count >= rowsCopied + 10
        }
        let recovered = try Self.storedSequences(bed.outboxPath)
        #expect(recovered.count >= rowsCopied + 10)

        try await bed.broker.start()
        do {
            try await waitUntil("every stored event delivered", timeout: 120) {
                Set(subscriber.messages.compactMap(\.sequence)).isSuperset(of: recovered)
            }
        } catch {
            let missing = recovered.subtracting(subscriber.messages.compactMap(\.sequence)).sorted()
            Issue.record("not delivered: \(missing.prefix(20)) of \(recovered.count); log:\n\(daemon.stderr)")
            throw error
        }
        try await waitUntil("the later beacons' presence delivered", timeout: 60) {
            Set(subscriber.messages.compactMap { $0.string("beacon_id") }).isSuperset(of: afterMinors)
        }
        daemon.signal(SIGTERM)
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 0, "\(daemon.stderr)")
        await subscriber.stop()
        let stderr = daemon.stderr
        let dropped = try #require(logValue(stderr, message: "msg=stopped", key: "dropped").flatMap { Int($0) })

        let messages = subscriber.messages
        let delivered = Set(messages.compactMap(\.sequence))
        let earlier = messages.filter { !afterMinors.contains($0.string("beacon_id") ?? "") }.compactMap(\.sequence)
        let later = messages.filter { afterMinors.contains($0.string("beacon_id") ?? "") }.compactMap(\.sequence)
        #expect(!later.isEmpty)
        #expect((later.min() ?? 0) > (before.max() ?? .max), "numbered above everything stored before the loss")
        #expect((later.min() ?? 0) > (earlier.filter { before.contains($0) }.max() ?? 0))
        return Outcome(
            before: before, recovered: recovered, delivered: delivered, rowsLost: rowsLost, rowsCopied: rowsCopied,
            dropped: dropped, log: stderr)
    }

    /// The sequence numbers in the outbox table (read through a second connection, as `beaconbridge outbox`
    /// does; never creating a file).
    static func storedSequences(_ path: String) throws -> Set<UInt64> {
        guard access(path, F_OK) == 0 else { throw TestFailure("no file at \(path)") }
        let database = try SQLiteDatabase(path: path)
        let statement = try database.statement("SELECT seq FROM outbox")
        var out = Set<UInt64>()
        while try statement.step() { out.insert(UInt64(statement.int64(at: 0))) }
        statement.reset()
        return out
    }

    /// Moves every page of the WAL into the database file (retried while the gateway holds a lock).
    static func checkpoint(_ path: String) async throws {
        let database = try SQLiteDatabase(path: path)
        for _ in 0..<600 {
            let statement = try database.statement("PRAGMA wal_checkpoint(TRUNCATE)")
            let busy = try statement.step() ? statement.int64(at: 0) : 1
            statement.reset()
            if busy == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("the WAL could not be checkpointed within 60 s")
    }

    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }
}
