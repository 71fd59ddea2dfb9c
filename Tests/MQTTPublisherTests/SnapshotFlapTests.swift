import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// Issue 17.8: every reconnect asks for a full retained region-state snapshot. Under a flapping broker with
/// 5,000 beacons these used to fill the outbox and, at `max_rows`, evict real enter/exit events. Snapshot
/// entries are now never stored: the outbox holds only real events, none is evicted, every one arrives, and
/// the last retained value of each topic is the newest.
@Suite(.serialized) struct SnapshotFlapTests {
    @Test(.timeLimit(.minutes(5))) func aFlappingBrokerWith5000BeaconsNeverEvictsRealEvents() async throws {
        // A persistent broker and a persistent subscriber session: the real events are delivered right after
        // each restart, often before the test's subscriber has reconnected; the broker queues them for it.
        let broker = try MosquittoProcess(persistent: true)
        try await broker.start()
        let directory = try TestDirectory.make(prefix: "bb-flap")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Room for the real events only: 5 snapshots of 5,000 entries would have evicted them.
        let database = try GatewayDatabase(settings: OutboxSettings(path: directory + "/outbox.sqlite", maxRows: 3000))
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "flap")
        let subscriber = try TestSubscriber(
            port: broker.port, patterns: ["beaconbridge/flap/region/#"], persistentID: "flap-sub")
        try await subscriber.start()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port, inflightWindow: 200), layout: layout),
            outbox: database)
        var encoder = SequencedEncoder(layout: layout, database: nil)
        let beacons = 5_000
        let rounds = 6
        // Encoded up front, in the order a daemon would produce them: a snapshot for every connect, and real
        // enter/exit events for 200 beacons while the broker is down in each round.
        var snapshotQueue: [[EventEnvelope]] = []
        var realRounds: [[EventEnvelope]] = []
        for round in 0...rounds {
            snapshotQueue.append(try await encoder.encode((0..<beacons).map { EventFactory.region($0, kind: .state) }))
            if round < rounds {
                realRounds.append(
                    try await encoder.encode(
                        (0..<200).flatMap { index in
                            [
                                EventFactory.region(index + round * 200, kind: .enter),
                                EventFactory.region(index + round * 200, kind: .exit),
                            ]
                        }))
            }
        }
        let state = FlapState(snapshots: snapshotQueue)
        let real = realRounds.flatMap { $0 }.map(\.id)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await publisher.run() }
            // The daemon's part: a full region-state snapshot on every connect.
            group.addTask {
                for await notice in publisher.notices {
                    guard case .snapshotRequested = notice, let entries = state.nextSnapshot() else { continue }
                    publisher.publishSnapshot(entries)
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    state.sample(publisher.counters.backlogRows)
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            for round in 0..<rounds {
                broker.stop()
                try await waitUntil("disconnected", timeout: 60) { !publisher.counters.connected }
                publisher.publish(realRounds[round])
                try await broker.start()
                try await waitUntil("reconnected", timeout: 60) { publisher.counters.connected }
            }
            let expected = Set(real)
            try await waitUntil("every real event delivered", timeout: 120) {
                Set(subscriber.messages.compactMap { $0.json?["id"]?.string }).isSuperset(of: expected)
            }
            try await waitUntil("outbox drained", timeout: 60) { publisher.counters.backlogRows == 0 }
            await publisher.stop()
            group.cancelAll()
        }
        await subscriber.stop()
        let counters = publisher.counters
        print(
            "flap: \(state.taken) snapshots of \(beacons), \(real.count) real events, peak outbox "
                + "\(state.peak) rows, snapshot sent \(counters.snapshotSent), superseded "
                + "\(counters.snapshotSuperseded), dropped \(counters.dropped), connects \(counters.connects)")
        #expect(state.taken >= rounds)
        #expect(counters.droppedTotal == 0, "real events evicted or lost: \(counters.dropped)")
        #expect(state.peak <= real.count)  // only real events were ever stored
        #expect(try await database.stats().dropped.isEmpty)
    }
}

/// The test's shared state: the snapshots to hand out, the peak backlog seen.
final class FlapState: @unchecked Sendable {
    private let lock = NSLock()
    private var snapshots: [[EventEnvelope]]
    private var takenCount = 0
    private var peakBacklog = 0

    init(snapshots: [[EventEnvelope]]) { self.snapshots = snapshots }

    func nextSnapshot() -> [EventEnvelope]? {
        lock.withLock {
            guard takenCount < snapshots.count else { return nil }
            defer { takenCount += 1 }
            return snapshots[takenCount]
        }
    }

    func sample(_ rows: Int) { lock.withLock { peakBacklog = max(peakBacklog, rows) } }
    var taken: Int { lock.withLock { takenCount } }
    var peak: Int { lock.withLock { peakBacklog } }
}
