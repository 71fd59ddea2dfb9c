import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// Issue 17.4: a disk that fills while the gateway runs (a small tmpfs filled by a ballast file). After
/// `SQLITE_FULL` new events wait in memory while the rows written before stay in the database and are still
/// read; the database is retried, and once space returns the memory backlog is written back into it; every
/// event is then delivered in sequence order, and the figures say where the backlog is.
@Suite(.serialized) struct DiskFullRecoveryTests {
    @Test(.timeLimit(.minutes(5))) func aDiskThatFillsWhileRunningIsRetriedAndEverythingIsDeliveredInOrder()
        async throws
    {
        let mountPoint = try TestDirectory.make(prefix: "bb-tmpfs")
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        guard
            await ScratchFileSystem.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", mountPoint])
        else {
            print("SKIP: DiskFullRecoveryTests needs to mount a tmpfs (root with CAP_SYS_ADMIN); not run here")
            return
        }
        do {
            try await run(in: mountPoint)
        } catch {
            _ = await ScratchFileSystem.run("/bin/umount", ["-l", mountPoint])
            throw error
        }
        #expect(await ScratchFileSystem.run("/bin/umount", ["-l", mountPoint]))
    }

    func run(in directory: String) async throws {
        // A persistent subscriber session; the broker is down while the disk fills and recovers.
        let broker = try MosquittoProcess(persistent: true)
        try await broker.start()
        let subscriber = try TestSubscriber(
            port: broker.port, patterns: ["beaconbridge/fullfs/#"], persistentID: "fullfs-sub")
        try await subscriber.start()
        broker.stop()
        let database = try GatewayDatabase(settings: OutboxSettings(path: directory + "/outbox.sqlite"))
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "fullfs")
        var encoder = SequencedEncoder(layout: layout, database: database)
        // Encoded (sequence numbers reserved) while there is space.
        let before = try await encoder.encode(
            (0..<100).map { EventFactory.region($0 % 20, kind: $0 % 2 == 0 ? .enter : .exit) })
        let during = try await encoder.encode(
            (100..<400).map { EventFactory.presence($0 % 20, state: $0 % 2 == 0 ? .seen : .away) })
        let after = try await encoder.encode((400..<450).map { EventFactory.region($0 % 20, kind: .enter) })
        let all = before + during + after

        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: layout),
            outbox: database)
        let notices = NoticeLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in publisher.notices { notices.append(notice) } }
            try await withRunningPublisher(publisher) {
                publisher.publish(before)
                try await waitUntil("the first events stored", timeout: 60) {
                    publisher.counters.backlogRows == before.count
                }
                let ballast = directory + "/ballast"
                let filled = try ScratchFileSystem.fill(ballast)
                print("disk full: ballast \(filled) bytes")
                for chunk in stride(from: 0, to: during.count, by: 50) {
                    publisher.publish(Array(during[chunk..<min(during.count, chunk + 50)]))
                }
                try await waitUntil("the database failed (disk full)", timeout: 60) {
                    publisher.counters.outboxDegraded
                }
                try await waitUntil("the whole backlog counted", timeout: 60) {
                    publisher.counters.backlogRows == before.count + during.count
                }
                #expect(try await database.stats().rows < before.count + during.count, "some events are in memory only")
                // Space returns: the memory backlog is written back, and what follows is stored again.
                try FileManager.default.removeItem(atPath: ballast)
                try await waitUntil("written back", timeout: 60) { !publisher.counters.outboxDegraded }
                publisher.publish(after)
                try await waitUntil("everything stored", timeout: 60) { publisher.counters.backlogRows == all.count }
                #expect(try await database.stats().rows == all.count)
                try await broker.start()
                let expected = Set(all.map(\.id))
                try await waitUntil(
                    "everything delivered", timeout: 120,
                    detail: {
                        let received = Set(subscriber.messages.compactMap { $0.json?["id"]?.string })
                        let counters = publisher.counters
                        let missing = all.filter { !received.contains($0.id) }
                        let sample = missing.prefix(4).map { "\($0.sequence) \($0.topic) retain \($0.retain)" }
                        return "subscriber has \(received.intersection(expected).count) of \(expected.count), "
                            + "missing \(missing.count) (\(Set(missing.map(\.kind)))) first \(sample), "
                            + "subscribed \(subscriber.isSubscribed), events \(subscriber.events); publisher "
                            + "connects \(counters.connects), published \(counters.published), acknowledged \(counters.acknowledged), "
                            + "backlog \(counters.backlogRows), inflight \(counters.inflight), connected \(counters.connected)"
                            + "; broker log: " + broker.log.split(separator: "\n").suffix(30).joined(separator: " | ")
                    }
                ) {
                    Set(subscriber.messages.compactMap { $0.json?["id"]?.string }).isSuperset(of: expected)
                }
                try await waitUntil("outbox drained", timeout: 60) { publisher.counters.backlogRows == 0 }
            }
            try await group.waitForAll()
        }
        await subscriber.stop()
        let delivered = subscriber.messages.compactMap { $0.json?["id"]?.string }
        var seen = Set<String>()
        let firstArrivals = delivered.filter { seen.insert($0).inserted }
        #expect(firstArrivals == all.map(\.id), "in sequence order, the rows from before the failure first")
        let failure = notices.all.compactMap { if case let .outboxFailed(text) = $0 { text } else { nil } }.first
        #expect(failure?.contains("disk full") == true, "\(failure ?? "no outboxFailed notice")")
        let written = notices.all.compactMap { if case let .outboxRecovered(rows) = $0 { rows } else { nil } }
        #expect(written.count == 1 && written[0] > 0, "\(written)")
        #expect(publisher.counters.droppedTotal == 0, "\(publisher.counters.dropped)")
        #expect(try await database.stats().rows == 0)
    }
}
