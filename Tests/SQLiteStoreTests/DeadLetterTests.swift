import BeaconDelivery
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// The `dead_letter` table: refused events moved out of the outbox, kept across a reopen, bounded, requeued.
@Suite struct DeadLetterTests {
    let directory = TemporaryDirectory(prefix: "bb-sqlite")

    func settings(maxRows: Int = 1000) -> OutboxSettings {
        OutboxSettings(path: directory.file("outbox.sqlite"), maxRows: maxRows, maxBytes: 100_000_000)
    }

    @Test func deadLettersLeaveTheOutboxAndSurviveAReopen() async throws {
        let envelopes = (1...5).map { EnvelopeFactory.make(UInt64($0)) }
        do {
            let database = try GatewayDatabase(settings: settings())
            try await database.append(envelopes)
            try await database.deadLetter([
                DeadLetter(
                    envelope: envelopes[1], reason: "broker refused: not authorized (0x87)",
                    attempts: 1, time: 1_700_000_100)
            ])
            // A live event that never reached the outbox is stored as well.
            try await database.deadLetter([
                DeadLetter(
                    envelope: EnvelopeFactory.make(9), reason: "client refused: too large",
                    attempts: 1, time: 1_700_000_200)
            ])
            let stats = try await database.stats()
            #expect(stats.rows == 4)
            #expect(stats.bytes == [0, 2, 3, 4].reduce(0) { $0 + envelopes[$1].payloadSize })
            #expect(stats.deadLetters == 2)
        }
        let reopened = try GatewayDatabase(settings: settings())
        #expect(try await reopened.peek(after: nil, limit: 10).map(\.sequence) == [1, 3, 4, 5])
        let letters = try await reopened.deadLetters(limit: 10)
        #expect(letters.map(\.envelope.sequence) == [2, 9])
        #expect(letters.first?.envelope == envelopes[1])
        #expect(letters.first?.reason == "broker refused: not authorized (0x87)")
        #expect(letters.first?.time == 1_700_000_100)
        #expect(try await reopened.stats().deadLetters == 2)
    }

    @Test func requeueMovesThemBackInSequenceOrder() async throws {
        let database = try GatewayDatabase(settings: settings())
        let envelopes = (1...4).map { EnvelopeFactory.make(UInt64($0)) }
        try await database.append(envelopes)
        try await database.deadLetter(
            [envelopes[0], envelopes[2]].map {
                DeadLetter(envelope: $0, reason: "r", attempts: 5, time: 1)
            })
        #expect(try await database.requeueDeadLetters() == 2)
        #expect(try await database.peek(after: nil, limit: 10) == envelopes)
        let stats = try await database.stats()
        #expect(stats.deadLetters == 0)
        #expect(stats.rows == 4)
        #expect(stats.bytes == envelopes.reduce(0) { $0 + $1.payloadSize })
    }

    @Test func theTableKeepsTheNewestAndCountsWhatItDrops() async throws {
        let database = try GatewayDatabase(settings: settings())
        let letters = (1...UInt64(DeadLetter.maxKept + 7)).map {
            DeadLetter(envelope: EnvelopeFactory.make($0, payloadBytes: 60), reason: "r", attempts: 1, time: 1)
        }
        try await database.deadLetter(letters)
        let stats = try await database.stats()
        #expect(stats.deadLetters == DeadLetter.maxKept)
        #expect(stats.dropped[.deadLetterCap] == 7)
        #expect(try await database.deadLetters(limit: 1).first?.envelope.sequence == 8)
    }
}
