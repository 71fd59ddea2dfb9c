import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// A full disk (SQLite `max_page_count`) turns the durable outbox into the memory fallback: a clear notice,
/// a counter, and delivery goes on.
@Suite(.serialized) struct OutboxDegradeTests {
    @Test func diskFullFallsBackToMemoryAndKeepsPublishing() async throws {
        // A persistent subscriber session, then the broker goes down before the publisher starts.
        let broker = try MosquittoProcess(persistent: true)
        try await broker.start()
        let subscriber = try TestSubscriber(
            port: broker.port, patterns: ["beaconbridge/fullgw/#"], persistentID: "degrade-sub")
        try await subscriber.start()
        broker.stop()
        let directory = try TestDirectory.make(prefix: "bb-degrade")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try GatewayDatabase(settings: OutboxSettings(path: directory + "/outbox.sqlite"))
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "fullgw")
        var encoder = SequencedEncoder(layout: layout, database: database)
        let firstEvents = try await encoder.encode((0..<300).map { EventFactory.region($0 % 5, kind: .enter) })
        try await database.execute("PRAGMA max_page_count = \(try await database.pageCount() + 1)")

        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: layout),
            outbox: database)
        let notices = NoticeLog()
        var delivered: [String] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in publisher.notices { notices.append(notice) } }
            try await withRunningPublisher(publisher) {
                // Broker down: the events go to the outbox, which is full.
                publisher.publish(firstEvents)
                try await waitUntil("memory fallback", timeout: 60) { publisher.counters.outboxDegraded }
                try await broker.start()
                try await waitUntil("backlog delivered from memory", timeout: 60) {
                    subscriber.messages.filter { $0.json?["id"] != nil }.count >= firstEvents.count
                }
                // Live publishing goes on.
                let live = try await encoder.encode([EventFactory.presence(1, state: .away)])
                publisher.publish(live)
                try await waitUntil("live event delivered", timeout: 60) {
                    subscriber.messages.contains { $0.json?["id"]?.string == live[0].id }
                }
                await subscriber.stop()
                delivered = subscriber.messages.compactMap { $0.json?["id"]?.string }
            }
            try await group.waitForAll()
        }
        let failure = notices.all.compactMap { if case let .outboxFailed(text) = $0 { text } else { nil } }.first
        #expect(failure?.contains("disk full") == true, "\(failure ?? "no outboxFailed notice")")
        // At least once, in order: duplicates are documented (a resend after a reconnect), so compare the
        // first arrival of each id. (One run in CI-like load delivered an id twice; see the stop note.)
        var seen = Set<String>()
        let firstArrivals = delivered.filter { seen.insert($0).inserted }
        #expect(Array(firstArrivals.prefix(firstEvents.count)) == firstEvents.map(\.id))
        // Once the memory backlog was delivered, a write-back (of nothing) may already have made the database
        // the outbox again (issue 17.4, DiskFullRecoveryTests): either way the figure agrees with the notices.
        let recovered = notices.all.contains { if case .outboxRecovered = $0 { true } else { false } }
        #expect(publisher.counters.outboxDegraded != recovered)
        #expect(publisher.counters.dropped.isEmpty)
    }

    @Test func capDropsAreCountedAndReported() async throws {
        let directory = try TestDirectory.make(prefix: "bb-cap")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = OutboxSettings(path: directory + "/outbox.sqlite", maxRows: 10)
        let database = try GatewayDatabase(settings: settings)
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "capgw")
        let deadPort = try FreePort.find()  // no broker: everything goes to the outbox
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: deadPort), layout: layout, outbox: settings),
            outbox: database)
        var encoder = SequencedEncoder(layout: layout, database: database)
        let envelopes = try await encoder.encode((0..<30).map { EventFactory.region($0, kind: .enter) })
        let notices = NoticeLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in publisher.notices { notices.append(notice) } }
            try await withRunningPublisher(publisher) {
                publisher.publish(envelopes)
                try await waitUntil("drops counted", timeout: 60) { publisher.counters.dropped["row_cap"] == 20 }
            }
            try await group.waitForAll()
        }
        let reported = notices.all.reduce(0) { total, notice in
            if case let .eventsDropped("row_cap", count) = notice { total + count } else { total }
        }
        #expect(reported == 20)
        #expect(notices.all.contains { if case .connectionFailed = $0 { true } else { false } })
        // The newest ten are kept, oldest first out.
        #expect(try await database.peek(after: nil, limit: 100).map(\.id) == envelopes.suffix(10).map(\.id))
    }

    /// Issue 17.5: a stop that cannot persist (no usable database: the memory outbox) counts every event it
    /// discards as dropped, and says no backlog is kept.
    @Test func aStopWithoutADatabaseCountsEveryDiscardedEventAsDropped() async throws {
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "nodbgw")
        let deadPort = try FreePort.find()  // no broker: everything waits in the memory outbox
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: deadPort), layout: layout),
            outbox: nil)
        var encoder = SequencedEncoder(layout: layout, database: nil)
        let envelopes = try await encoder.encode((0..<40).map { EventFactory.region($0, kind: .enter) })
        let notices = NoticeLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in publisher.notices { notices.append(notice) } }
            try await withRunningPublisher(publisher) {
                publisher.publish(envelopes)
                try await waitUntil("held in memory", timeout: 60) { publisher.counters.backlogRows == envelopes.count }
                #expect(publisher.counters.droppedTotal == 0)
            }
            try await group.waitForAll()
        }
        #expect(publisher.counters.dropped == ["not_persisted": envelopes.count])
        #expect(publisher.counters.backlogRows == 0)
        let reported = notices.all.reduce(0) { total, notice in
            if case let .eventsDropped("not_persisted", count) = notice { total + count } else { total }
        }
        #expect(reported == envelopes.count)
    }
}
