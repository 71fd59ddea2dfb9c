import BeaconDelivery
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Issue 17.5 while running, at the database's level: `verifyFile()` notices a deleted, replaced, truncated
/// or damaged file, copies what the open handle still reads into a new database at the path, carries the
/// sequence counter and the drop counts forward, and counts what it could not copy as `file_lost`.
@Suite struct FileLossTests {
    let directory = TemporaryDirectory(prefix: "bb-sqlite")
    var path: String { directory.file("outbox.sqlite") }

    func open() throws -> GatewayDatabase { try GatewayDatabase(settings: OutboxSettings(path: path)) }

    @Test func aHealthyFileIsLeftAloneAndAGrowingOneIsNotTruncated() async throws {
        let database = try open()
        #expect(await database.verifyFile() == nil)
        try await database.append((1...500).map { EnvelopeFactory.make($0) })
        try await database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(await database.verifyFile() == nil)
        #expect(try await database.stats().rows == 500)
    }

    @Test func aDeletedFileIsCopiedFromTheOpenHandleIntoANewOne() async throws {
        let database = try open()
        try await database.append((1...300).map { EnvelopeFactory.make($0) })
        let reserved = try await database.reserveSequences(10)
        #expect(unlink(path) == 0)
        let recovery = try #require(await database.verifyFile())
        #expect(recovery.cause == .deleted)
        #expect(recovery.rowsCopied == 300)
        #expect(recovery.rowsLost == 0)
        #expect(recovery.copyError == nil && recovery.openError == nil)
        #expect(access(path, F_OK) == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // The new file is the outbox now: the rows are there, the counter went on, writes work.
        #expect(try await database.peek(after: nil, limit: 1000).map(\.sequence) == Array(1...300))
        let next = try await database.reserveSequences(10)
        #expect(next.next >= reserved.end)
        try await database.append([EnvelopeFactory.make(301)])
        #expect(await database.verifyFile() == nil)
        #expect(try await database.stats().rows == 301)
    }

    @Test func aReplacedFileIsMovedAsideAndOurRowsPutBack() async throws {
        let database = try open()
        try await database.append((1...50).map { EnvelopeFactory.make($0) })
        let stranger = directory.file("stranger")
        try Data("not ours".utf8).write(to: URL(fileURLWithPath: stranger))
        #expect(rename(stranger, path) == 0)
        let recovery = try #require(await database.verifyFile())
        #expect(recovery.cause == .replaced)
        #expect(recovery.rowsCopied == 50 && recovery.rowsLost == 0)
        let aside = try #require(recovery.movedAside)
        #expect(aside.hasPrefix(path + ".replaced-"))
        #expect(try String(contentsOfFile: aside, encoding: .utf8) == "not ours")
        #expect(try await database.stats().rows == 50)
    }

    @Test func aTruncatedFileCountsWhatCouldNotBeCopiedAndStartsAFreshOne() async throws {
        let database = try open()
        try await database.append((1...400).map { EnvelopeFactory.make($0) })
        try await database.deadLetter([
            DeadLetter(envelope: EnvelopeFactory.make(401), reason: "broker refused: test", attempts: 1, time: 1)
        ])
        let before = try await database.reserveSequences(10)
        // Checkpointed by a second connection (as another process would): the open handle's page cache is no
        // longer valid, so the truncation really takes the rows (a cached copy would still be copied).
        try SQLiteDatabase(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(truncate(path, 0) == 0)
        let recovery = try #require(await database.verifyFile())
        #expect(recovery.cause == .truncated)
        #expect(recovery.rowsLost + recovery.rowsCopied == 401)
        #expect(recovery.rowsLost > 0)
        let stats = try await database.stats()
        #expect(stats.dropped[.fileLost] == recovery.rowsLost)
        #expect(stats.rows + stats.deadLetters == recovery.rowsCopied)
        #expect(try await database.reserveSequences(10).next >= before.end, "the counter never goes backwards")
        try await database.append([EnvelopeFactory.make(500)])
        #expect(try await database.peek(after: 499, limit: 10).map(\.sequence) == [500])
    }
}
