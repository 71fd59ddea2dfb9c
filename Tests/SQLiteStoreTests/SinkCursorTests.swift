import BeaconDelivery
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// A cursor per sink (docs/outbox.md, "Sinks"), on real files.
@Suite struct SinkCursorTests {
    let directory = TemporaryDirectory(prefix: "bb-sinks")

    func settings() -> OutboxSettings { OutboxSettings(path: directory.file("outbox.sqlite"), maxRows: 1000) }

    /// A file in the format before sink cursors (schema version 4), written by hand: every row is kept and
    /// every sink sends it.
    @Test func versionFourFileMigratesWithoutLosingARow() async throws {
        do {
            let raw = try SQLiteDatabase(path: settings().path)
            for migration in StoreSchema.migrations.prefix(4) { try raw.execute(migration) }
            try raw.execute("PRAGMA user_version = 4")
            let outbox = try Outbox(database: raw, maxRows: 1000, maxBytes: 10_000_000)
            try outbox.append((1...5).map { EnvelopeFactory.make($0) })
            try outbox.deadLetter([DeadLetter(envelope: EnvelopeFactory.make(9), reason: "x", attempts: 1, time: 1)])
            raw.close()
        }
        let database = try GatewayDatabase(settings: settings())
        #expect(try await database.stats().rows == 5)
        #expect(try await database.stats().deadLetters == 1)
        #expect(try await database.setSinks(["mqtt", "webhook"]) == 0)
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(try await database.peek(for: "webhook", after: nil, limit: 10).map(\.sequence) == [1, 2, 3, 4, 5])
    }

    @Test func aRowIsDeletedOnlyOnceEverySinkAcknowledgedIt() async throws {
        let database = try GatewayDatabase(settings: settings())
        try await database.setSinks(["mqtt", "webhook"])
        try await database.append((1...6).map { EnvelopeFactory.make($0) })
        // MQTT acknowledges out of order (QoS 1 in flight), the webhook in order.
        try await database.delete([2, 4, 5])
        try await database.acknowledge([1, 2, 3], by: "webhook")
        #expect(try await database.peek(for: "webhook", after: nil, limit: 10).map(\.sequence) == [4, 5, 6])
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [1, 3, 6])
        // Row 2 was acknowledged by both: gone.
        #expect(try await database.stats().rows == 5)
        #expect(try await database.backlog(of: "webhook") == 3)
        #expect(try await database.backlog(of: "mqtt") == 3)
        try await database.delete([1, 3, 6, 99])
        try await database.acknowledge([4, 5, 6, 99], by: "webhook")
        #expect(try await database.stats().rows == 0)
        #expect(try await database.stats().bytes == 0)
    }

    @Test func cursorsSurviveAReopen() async throws {
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.setSinks(["mqtt", "webhook"])
            try await database.append((1...4).map { EnvelopeFactory.make($0) })
            try await database.acknowledge([1, 2], by: "webhook")
            try await database.delete([1])
        }
        let reopened = try GatewayDatabase(settings: settings())
        try await reopened.setSinks(["mqtt", "webhook"])
        #expect(try await reopened.peek(for: "webhook", after: nil, limit: 10).map(\.sequence) == [3, 4])
        #expect(try await reopened.peek(after: nil, limit: 10).map(\.sequence) == [2, 3, 4])
        #expect(try await reopened.stats().rows == 3)
    }

    @Test func removingASinkReleasesWhatOnlyItHeldBack() async throws {
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.setSinks(["mqtt", "webhook"])
            try await database.append((1...4).map { EnvelopeFactory.make($0) })
            try await database.delete([1, 2])
        }
        let reopened = try GatewayDatabase(settings: settings())
        #expect(try await reopened.setSinks(["mqtt"]) == 2)
        #expect(try await reopened.peek(after: nil, limit: 10).map(\.sequence) == [3, 4])
        #expect(try await reopened.stats().rows == 2)
    }

    @Test func expiryAndEvictionApplyToEverySinkAndLeaveNoMarks() async throws {
        let database = try GatewayDatabase(
            settings: OutboxSettings(path: directory.file("outbox.sqlite"), maxRows: 3))
        try await database.setSinks(["mqtt", "webhook"])
        try await database.append([
            EnvelopeFactory.make(1, kind: .sighting, time: 100), EnvelopeFactory.make(2, kind: .region, time: 100),
        ])
        try await database.delete([1, 2])
        try await database.expire(before: 150)
        try await database.append((3...6).map { EnvelopeFactory.make($0) })
        #expect(try await database.peek(for: "webhook", after: nil, limit: 10).map(\.sequence) == [4, 5, 6])
        // Rows 1 (expired) and 2-3 (evicted) took their acknowledgement marks with them.
        let marks = try database.performSync { (connection) throws(SQLiteError) in
            try connection.database.scalar("SELECT count(*) FROM outbox_ack")
        }
        #expect(marks == 0)
    }

    @Test func deadLettersLeaveOnlyThePrimarySinksBacklog() async throws {
        let database = try GatewayDatabase(settings: settings())
        try await database.setSinks(["mqtt", "webhook"])
        try await database.append((1...3).map { EnvelopeFactory.make($0) })
        try await database.deadLetter([
            DeadLetter(envelope: EnvelopeFactory.make(2), reason: "too big", attempts: 1, time: 1)
        ])
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [1, 3])
        #expect(try await database.peek(for: "webhook", after: nil, limit: 10).map(\.sequence) == [1, 2, 3])
        #expect(try await database.requeueDeadLetters() == 1)
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [1, 2, 3])
    }
}
