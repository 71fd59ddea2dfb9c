import BeaconDelivery
import BeaconEvents
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Issue 17, items 5 (at start) and 6: the database file's checks before opening, a damaged file moved aside,
/// files created private, and a sequence counter that never goes backwards.
@Suite struct DatabaseStartTests {
    let directory = TemporaryDirectory(prefix: "bb-sqlite")

    func settings(_ name: String = "outbox.sqlite") -> OutboxSettings { OutboxSettings(path: directory.file(name)) }

    /// A run without a usable database numbers its events from the wall clock in microseconds (the daemon's
    /// fallback). A counter that only counts from its creation stays far below those numbers; the next start
    /// must continue above them.
    @Test func theCounterContinuesAboveARunWithoutADatabase() async throws {
        var lastWithDatabase: UInt64 = 0
        do {
            let database = try GatewayDatabase(settings: settings())
            var block = try await database.reserveSequences(10)
            while let number = block.take() { lastWithDatabase = number }
        }
        try await Task.sleep(for: .milliseconds(20))
        // The run without a database: a block starting at the wall clock, as Daemon.reserveSequences does.
        let wallClockStart = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        var noDatabase = SequenceBlock(first: wallClockStart, end: wallClockStart + 1024)
        var lastWithoutDatabase: UInt64 = 0
        for _ in 0..<5 { if let number = noDatabase.take() { lastWithoutDatabase = number } }
        #expect(lastWithoutDatabase > lastWithDatabase)

        let reopened = try GatewayDatabase(settings: settings())
        let next = try await reopened.reserveSequences(10)
        #expect(next.next > lastWithoutDatabase)
    }

    /// Numbers this process handed out while the database failed (a wall-clock block) are passed as the floor
    /// of the next reservation.
    @Test func aReservationContinuesAboveTheFloor() async throws {
        let database = try GatewayDatabase(settings: settings())
        let first = try await database.reserveSequences(10)
        let floor = first.end + 5_000_000
        let next = try await database.reserveSequences(10, above: floor)
        #expect(next.next > floor)
        let after = try await database.reserveSequences(10)
        #expect(after.next >= next.end)
    }

    @Test func aDamagedFileIsMovedAsideWithItsWALAndAFreshDatabaseCreated() async throws {
        let path = settings().path
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        try Data("wal bytes".utf8).write(to: URL(fileURLWithPath: path + "-wal"))
        let unixTime = 1_764_595_800.0  // 2025-12-01T13:30:00Z
        let (database, moved) = try GatewayDatabase.openMovingAsideDamaged(settings: settings(), unixTime: unixTime)
        let aside = try #require(moved)
        #expect(aside.path == path + ".damaged-20251201T133000Z")
        #expect(aside.error.contains("not an SQLite database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside.path)) == garbage)
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside.path + "-wal")) == Data("wal bytes".utf8))
        try await database.append([EnvelopeFactory.make(1)])
        #expect(try await database.stats().rows == 1)

        // A second damaged file at the same second gets its own name; nothing is overwritten.
        try garbage.write(to: URL(fileURLWithPath: directory.file("other.sqlite")))
        let (_, first) = try GatewayDatabase.openMovingAsideDamaged(
            settings: settings("other.sqlite"), unixTime: unixTime)
        try garbage.write(to: URL(fileURLWithPath: directory.file("other.sqlite")))
        try? FileManager.default.removeItem(atPath: directory.file("other.sqlite-wal"))
        try? FileManager.default.removeItem(atPath: directory.file("other.sqlite-shm"))
        let (_, second) = try GatewayDatabase.openMovingAsideDamaged(
            settings: settings("other.sqlite"), unixTime: unixTime)
        #expect(first?.path != second?.path)
        #expect(second?.path.hasSuffix("-2") == true)
    }

    @Test func aHealthyFileIsNotMovedAndOtherFailuresThrow() async throws {
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.append([EnvelopeFactory.make(1)])
        }
        let (reopened, moved) = try GatewayDatabase.openMovingAsideDamaged(settings: settings(), unixTime: 0)
        #expect(moved == nil)
        #expect(try await reopened.stats().rows == 1)
        let error = #expect(throws: SQLiteError.self) {
            try GatewayDatabase.openMovingAsideDamaged(
                settings: OutboxSettings(path: directory.file("no/such/dir.sqlite")), unixTime: 0)
        }
        #expect(error?.isCorrupt == false)
    }

    @Test func newDatabaseFilesAreCreatedOwnerOnly() async throws {
        let database = try GatewayDatabase(settings: settings())
        try await database.append([EnvelopeFactory.make(1)])
        for suffix in ["", "-wal", "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: settings().path + suffix)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(suffix)")
        }
    }

    /// `open(settings:)` (the `outbox` command's open from a task): the same database as `init(settings:)`,
    /// a new file private, the counter read at open (on the database's queue) so the floor is known at once, and
    /// a damaged file refused with the same error.
    @Test func openFromATaskIsTheSameOpenWithoutBlockingTheTask() async throws {
        let first = try await GatewayDatabase.open(settings: settings())
        let reserved = try await first.reserveSequences(10)
        try await first.append([EnvelopeFactory.make(1), EnvelopeFactory.make(2)])
        let attributes = try FileManager.default.attributesOfItem(atPath: settings().path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let reopened = try await GatewayDatabase.open(settings: settings())
        let floor = await reopened.sequenceFloor()
        #expect(floor >= reserved.end - 1)
        #expect(try await reopened.reserveSequences(1).next > floor)
        #expect(try await reopened.stats().rows == 2)

        let damaged = directory.file("damaged.sqlite")
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: damaged))
        let error = await #expect(throws: SQLiteError.self) {
            _ = try await GatewayDatabase.open(settings: OutboxSettings(path: damaged))
        }
        #expect(error?.isCorrupt == true)
    }

    @Test func pathProblemsAreNamed() throws {
        let folder = directory.file("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let plain = directory.file("plain")
        try "x".write(toFile: plain, atomically: true, encoding: .utf8)
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(DatabaseFile.problem(with: folder)?.contains("is a directory") == true)
        #expect(
            DatabaseFile.problem(with: directory.file("missing/deeper/outbox.sqlite"))?.contains("does not exist")
                == true)
        // Only the database's own directory missing: created at start (`createDirectory(for:)`), not a problem.
        #expect(DatabaseFile.problem(with: directory.file("missing/outbox.sqlite")) == nil)
        #expect(DatabaseFile.missingDirectory(for: directory.file("missing/outbox.sqlite"))?.creatable == true)
        #expect(DatabaseFile.problem(with: plain + "/outbox.sqlite")?.contains("is not a directory") == true)
        #expect(DatabaseFile.problem(with: fifo)?.contains("not a regular file") == true)
        #expect(DatabaseFile.problem(with: "/proc/outbox.sqlite")?.contains("cannot create files") == true)
        #expect(DatabaseFile.problem(with: directory.file("new.sqlite")) == nil)
        #expect(DatabaseFile.problem(with: plain) == nil)
        // Checking creates nothing.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["fifo", "folder", "plain"])
        #expect(DatabaseFile.lacksDatabaseHeader(plain))
        #expect(!DatabaseFile.lacksDatabaseHeader(directory.file("absent.sqlite")))
    }
}
