import BeaconDelivery
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// The `taught` table (issue 43): what a gateway was taught survives a reopen, a record replaces the one on its
/// topic, a removal says whether there was one; a version-5 file gains the table without losing its rows.
@Suite struct TaughtRecordTableTests {
    let directory = TemporaryDirectory(prefix: "bb-taught")

    func settings() -> OutboxSettings { OutboxSettings(path: directory.file("gateway.sqlite")) }

    @Test func recordsSurviveAReopenAndAreReplacedAndRemovedByTopic() async throws {
        let topic = "bb/regions/taught/gw-a/desk/dev"
        do {
            let database = try GatewayDatabase(settings: settings())
            #expect(try await database.storedTaughtRecords().isEmpty)
            try await database.storeTaughtRecord(StoredTaughtRecord(topic: topic, payload: "{\"v\":1}", recorded: 10))
            try await database.storeTaughtRecord(StoredTaughtRecord(topic: topic, payload: "{\"v\":2}", recorded: 20))
            try await database.storeTaughtRecord(
                StoredTaughtRecord(topic: "bb/regions/reference/gw-a/dev", payload: "{}", recorded: 5))
        }
        let reopened = try GatewayDatabase(settings: settings())
        let rows = try reopened.loadTaughtRecords()
        #expect(rows.map(\.topic) == ["bb/regions/reference/gw-a/dev", topic])
        #expect(rows.last == StoredTaughtRecord(topic: topic, payload: "{\"v\":2}", recorded: 20))
        #expect(try await reopened.removeTaughtRecord(topic: topic))
        #expect(try await !reopened.removeTaughtRecord(topic: topic))
        #expect(try await reopened.storedTaughtRecords().count == 1)
    }

    @Test func aVersionFiveFileGainsTheTable() async throws {
        do {
            let raw = try SQLiteDatabase(path: directory.file("gateway.sqlite"))
            for migration in StoreSchema.migrations.prefix(5) { try raw.execute(migration) }
            try raw.execute("PRAGMA user_version = 5")
            try raw.execute("INSERT INTO region_state VALUES ('desk', 'dev', 'inside', 1, 1, 1)")
        }
        let database = try GatewayDatabase(settings: settings())
        #expect(try await database.storedTaughtRecords().isEmpty)
        #expect(try await database.storedRegionStates().count == 1)
    }
}
