import BeaconDelivery
import BeaconEvents
import BeaconTracking
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

@Suite struct OutboxTests {
    let directory = TemporaryDirectory(prefix: "bb-sqlite")

    func settings(_ name: String = "outbox.sqlite", maxRows: Int = 1000, maxBytes: Int = 10_000_000) -> OutboxSettings {
        OutboxSettings(path: directory.file(name), maxRows: maxRows, maxBytes: maxBytes)
    }

    @Test func appendedEnvelopesComeBackInSequenceOrderAfterReopen() async throws {
        let written = [5, 1, 3, 2, 4].map { EnvelopeFactory.make(UInt64($0)) }
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.append(Array(written[0..<2]))
            try await database.append(Array(written[2...]))
        }
        let reopened = try GatewayDatabase(settings: settings())
        let all = try await reopened.peek(after: nil, limit: 100)
        #expect(all == written.sorted { $0.sequence < $1.sequence })
        #expect(try await reopened.peek(after: 3, limit: 1).map(\.sequence) == [4])
        let stats = try await reopened.stats()
        #expect(stats.rows == 5)
        #expect(stats.bytes == written.reduce(0) { $0 + $1.payloadSize })
    }

    @Test func deleteRemovesOnlyAcknowledgedRowsAndDuplicatesAreIgnored() async throws {
        let database = try GatewayDatabase(settings: settings())
        try await database.append((1...6).map { EnvelopeFactory.make($0) })
        try await database.append([EnvelopeFactory.make(3)])
        try await database.delete([2, 4, 99])
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [1, 3, 5, 6])
        #expect(try await database.stats().rows == 4)
    }

    @Test func rowCapDropsSightingsFirstThenOldest() async throws {
        let database = try GatewayDatabase(settings: settings(maxRows: 5))
        let kinds: [EventKind] = [.region, .sighting, .presence, .sighting, .region, .region, .presence]
        try await database.append(
            kinds.enumerated().map { EnvelopeFactory.make(UInt64($0.offset + 1), kind: $0.element) })
        // 7 rows, cap 5: the two sightings (2, 4) go first.
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [1, 3, 5, 6, 7])
        try await database.append([EnvelopeFactory.make(8), EnvelopeFactory.make(9)])
        // No sightings left: the oldest rows go.
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [5, 6, 7, 8, 9])
        #expect(try await database.stats().dropped[.rowCap] == 4)
    }

    @Test func byteCapEvictsUntilUnderTheLimit() async throws {
        let database = try GatewayDatabase(settings: settings(maxBytes: 2_000))
        try await database.append((1...15).map { EnvelopeFactory.make($0, payloadBytes: 200) })
        let stats = try await database.stats()
        #expect(stats.bytes <= 2_000)
        #expect(stats.rows == 10)
        #expect(stats.dropped[.byteCap] == 5)
        #expect(try await database.peek(after: nil, limit: 1).first?.sequence == 6)
    }

    @Test func expiryDropsOnlyStaleSightingKinds() async throws {
        let database = try GatewayDatabase(settings: settings())
        try await database.append([
            EnvelopeFactory.make(1, kind: .sighting, time: 100), EnvelopeFactory.make(2, kind: .region, time: 100),
            EnvelopeFactory.make(3, kind: .espresense, time: 100), EnvelopeFactory.make(4, kind: .sighting, time: 200),
            EnvelopeFactory.make(5, kind: .presence, time: 50),
        ])
        try await database.expire(before: 150)
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [2, 4, 5])
        #expect(try await database.stats().dropped[.expired] == 2)
    }

    @Test func sequenceBlocksNeverRepeatAcrossReopen() async throws {
        var seen: Set<UInt64> = []
        var last: UInt64 = 0
        for _ in 0..<3 {
            let database = try GatewayDatabase(settings: settings())
            for _ in 0..<2 {
                var block = try await database.reserveSequences(100)
                while let number = block.take() {
                    #expect(seen.insert(number).inserted)
                    #expect(number > last)
                    last = number
                }
            }
        }
        #expect(seen.count == 600)
    }

    @Test func freshCounterStartsAtTheWallClockInMicroseconds() async throws {
        let before = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        let database = try GatewayDatabase(settings: settings())
        let block = try await database.reserveSequences(10)
        let after = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(block.next > before && block.next <= after + 1)
        #expect(block.end < 1 << 53)
    }

    @Test func counterCatchesUpWithStoredRows() async throws {
        let far = UInt64(Date().timeIntervalSince1970 * 1_000_000) + 10_000_000_000
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.append([EnvelopeFactory.make(far)])
        }
        let reopened = try GatewayDatabase(settings: settings())
        let block = try await reopened.reserveSequences(10)
        #expect(block.next == far + 1)
    }

    @Test func regionStatesRoundTripThroughTheStore() throws {
        let path = settings().path
        do {
            let database = try GatewayDatabase(settings: settings())
            try database.saveRegionStates([
                PersistedRegionState(
                    region: "kitchen", beaconID: "b1", state: .inside, since: 10, lastQualifying: 20, updated: 21),
                PersistedRegionState(
                    region: "hall", beaconID: "b1", state: .outside, since: 5, lastQualifying: 6, updated: 7),
            ])
            try database.saveRegionStates([
                PersistedRegionState(
                    region: "kitchen", beaconID: "b1", state: .outside, since: 30, lastQualifying: 31, updated: 32)
            ])
        }
        let reopened = try GatewayDatabase(settings: OutboxSettings(path: path))
        #expect(
            try reopened.loadRegionStates() == [
                PersistedRegionState(
                    region: "hall", beaconID: "b1", state: .outside, since: 5, lastQualifying: 6, updated: 7),
                PersistedRegionState(
                    region: "kitchen", beaconID: "b1", state: .outside, since: 30, lastQualifying: 31, updated: 32),
            ])
        try reopened.deleteRegionStates([(region: "hall", beaconID: "b1")])
        #expect(try reopened.loadRegionStates().map(\.region) == ["kitchen"])
    }

    @Test func garbageFileIsReportedAsCorrupt() throws {
        let path = directory.file("garbage.sqlite")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLiteError.self) { try GatewayDatabase(settings: OutboxSettings(path: path)) }
        #expect(error?.isCorrupt == true)
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains("not a database") == true)
    }

    @Test func fullDiskFailsTheAppendCleanlyAndKeepsEarlierRows() async throws {
        let database = try GatewayDatabase(settings: settings())
        try await database.append((1...10).map { EnvelopeFactory.make($0) })
        let pages = try await database.pageCount()
        try await database.execute("PRAGMA max_page_count = \(pages + 2)")
        var failure: SQLiteError?
        do {
            try await database.append((11...2000).map { EnvelopeFactory.make($0, payloadBytes: 1000) })
        } catch let error as SQLiteError {
            failure = error
        }
        #expect(failure?.isDiskFull == true)
        #expect(failure?.description.contains("disk full") == true)
        // The failed batch was rolled back; earlier rows are intact and the counters match the file.
        #expect(try await database.peek(after: nil, limit: 100).map(\.sequence) == Array(1...10))
        #expect(try await database.stats().rows == 10)
    }

    @Test func newerSchemaIsRefused() async throws {
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.execute("PRAGMA user_version = 99")
        }
        let error = #expect(throws: SQLiteError.self) { try GatewayDatabase(settings: settings()) }
        #expect(error?.message.contains("newer") == true)
    }
}
