import BeaconDelivery
import BeaconEvents
import BeaconModel
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// The broker goes away for `BB_OUTAGE_SECONDS` (default 30) in the middle of a stream of 3000 events and
/// comes back on the same port: every region and presence event arrives, in order, none missing.
@Suite(.serialized) struct BrokerOutageTests {
    static var outageSeconds: Double {
        ProcessInfo.processInfo.environment["BB_OUTAGE_SECONDS"].flatMap(Double.init) ?? 30
    }

    /// Event `i` of the stream: every third is a region event, every third + 1 a presence event.
    static func event(_ index: Int) -> EngineEvent {
        switch index % 3 {
        case 0: EventFactory.region(index % 40, kind: index % 2 == 0 ? .enter : .exit)
        case 1: EventFactory.presence(index % 40, state: index % 2 == 0 ? .seen : .away)
        default: EventFactory.sighting(index % 40)
        }
    }

    @Test(.timeLimit(.minutes(3))) func everyRegionAndPresenceEventSurvivesABrokerOutage() async throws {
        let broker = try MosquittoProcess(persistent: true)
        try await broker.start()
        let directory = try TestDirectory.make(prefix: "bb-outage")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try GatewayDatabase(settings: OutboxSettings(path: directory + "/outbox.sqlite"))
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "gw")
        let subscriber = try TestSubscriber(
            port: broker.port, patterns: ["beaconbridge/gw/#"], persistentID: "outage-sub")
        try await subscriber.start()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port, inflightWindow: 100), layout: layout),
            outbox: database)
        var encoder = SequencedEncoder(layout: layout, database: database)
        var durable: [String] = []  // ids of region and presence events, in publish order
        let perPhase = 1000

        try await withRunningPublisher(publisher) {
            try await waitUntil("publisher connected", timeout: 60) { publisher.counters.connected }
            func stream(_ range: Range<Int>, pause: Duration) async throws {
                for index in range {
                    let envelopes = try await encoder.encode([BrokerOutageTests.event(index)])
                    durable += envelopes.filter { $0.kind == .region || $0.kind == .presence }.map(\.id)
                    publisher.publish(envelopes)
                    try await Task.sleep(for: pause)
                }
            }
            try await stream(0..<perPhase, pause: .milliseconds(2))
            broker.stop()
            let outagePause = Duration.milliseconds(Int64(BrokerOutageTests.outageSeconds * 1000) / Int64(perPhase))
            try await stream(perPhase..<2 * perPhase, pause: outagePause)
            #expect(!publisher.counters.connected)
            #expect(publisher.counters.backlogRows > 0)
            try await broker.start()
            try await stream(2 * perPhase..<3 * perPhase, pause: .milliseconds(2))
            let expected = Set(durable)
            try await waitUntil("every region and presence event delivered", timeout: 60) {
                Set(subscriber.messages.compactMap { $0.json?["id"]?.string }).isSuperset(of: expected)
            }
            try await waitUntil("outbox drained", timeout: 60) { publisher.counters.backlogRows == 0 }
        }
        await subscriber.stop()

        let received = subscriber.messages.compactMap { message -> (String, Int64)? in
            guard let json = message.json, let id = json["id"]?.string, case let .int(sequence) = json["seq"],
                let kind = json["kind"]?.string, kind == "region" || kind == "presence"
            else { return nil }
            return (id, sequence)
        }
        // First occurrences are in publish order; later copies are at-least-once duplicates.
        var seen: Set<String> = []
        var firstOccurrences: [String] = []
        for (id, _) in received where seen.insert(id).inserted { firstOccurrences.append(id) }
        #expect(firstOccurrences == durable, "order or completeness broken")
        let duplicates = received.count - firstOccurrences.count
        let counters = publisher.counters
        print(
            "outage: \(durable.count) region/presence events, \(duplicates) duplicates, queued \(counters.queued), "
                + "drained \(counters.drained), dropped \(counters.dropped), connects \(counters.connects)")
        #expect(counters.connects >= 2)
        #expect(counters.queued > 0)
        #expect(try await database.stats().rows == 0)
    }
}
