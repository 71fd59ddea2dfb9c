import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// Stopping while events are unacknowledged loses nothing: they (and anything published after the stop
/// request) end up in the outbox.
@Suite(.serialized) struct StopTests {
    @Test func unacknowledgedEventsAreStoredOnStop() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        let directory = try TestDirectory.make(prefix: "bb-stop")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/outbox.sqlite"
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "stopgw")
        var published: [EventEnvelope] = []
        do {
            let database = try GatewayDatabase(settings: OutboxSettings(path: path))
            let publisher = try EventPublisher(
                configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: layout),
                outbox: database)
            var encoder = SequencedEncoder(layout: layout, database: database)
            published = try await encoder.encode((0..<50).map { EventFactory.region($0 % 7, kind: .enter) })
            // One QoS 1 envelope (an `away` would add a QoS 0 sighting, which is not kept for redelivery).
            let late = try await encoder.encode([EventFactory.presence(1, state: .seen)])
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await publisher.run() }
                try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
                broker.pause()  // the broker acknowledges nothing from now on
                publisher.publish(published)
                let count = published.count
                try await waitUntil("all in flight", timeout: 60) { publisher.counters.published == count }
                #expect(publisher.counters.acknowledged == 0)
                group.addTask { await publisher.stop() }
                publisher.publish(late)  // races with the stop request: stored either way
                try await group.waitForAll()
            }
            published += late
            #expect(publisher.counters.acknowledged == 0)
        }
        broker.resume()
        let reopened = try GatewayDatabase(settings: OutboxSettings(path: path))
        #expect(try await reopened.peek(after: nil, limit: 100).map(\.id) == published.map(\.id))
    }
}
