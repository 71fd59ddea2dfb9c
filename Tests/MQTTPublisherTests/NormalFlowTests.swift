import BeaconDelivery
import BeaconEvents
import BeaconModel
import BeaconRuntime
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

@Suite(.serialized) struct NormalFlowTests {
    @Test func eventsArriveOnTheDocumentedTopicsAndMatchTheirSchemas() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        let directory = try TestDirectory.make(prefix: "bb-flow")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try GatewayDatabase(settings: OutboxSettings(path: directory + "/outbox.sqlite"))
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "gw1")
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await subscriber.start()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: layout), outbox: database)
        var encoder = SequencedEncoder(layout: layout, database: database)

        try await withRunningPublisher(publisher) {
            try await waitUntil("publisher connected", timeout: 60) { publisher.counters.connected }
            var events: [EngineEvent] = []
            for index in 0..<5 {
                events += [
                    EventFactory.sighting(index), EventFactory.presence(index, state: .seen),
                    EventFactory.region(index, kind: .enter), EventFactory.region(index, kind: .state),
                    EventFactory.region(index, kind: .exit), EventFactory.presence(index, state: .away),
                ]
            }
            var envelopes = try await encoder.encode(events)
            envelopes.append(
                try encoder.encoder.encode(
                    GatewayTelemetry(
                        time: SystemClock.realtime(), uptime: 12.5, counters: publisher.counters.telemetry)))
            publisher.publish(envelopes)
            let expected = envelopes.count
            try await waitUntil("all events delivered", timeout: 60) {
                subscriber.messages(under: "beaconbridge/gw1/").filter { !$0.topic.hasSuffix("/availability") }.count
                    >= expected
            }
        }
        try await waitUntil("offline after stop", timeout: 60) {
            subscriber.messages(under: "beaconbridge/gw1/availability").last?.payload == "offline"
        }
        await subscriber.stop()

        let received = subscriber.messages(under: "beaconbridge/gw1/")
        #expect(received.contains { $0.topic == "beaconbridge/gw1/availability" && $0.payload == "online" })
        #expect(received.last?.topic == "beaconbridge/gw1/availability" && received.last?.payload == "offline")
        let events = received.filter { !$0.topic.hasSuffix("/availability") }
        var validators: [String: JSONSchemaValidator] = [:]
        var lastSequence: Int64 = 0
        for message in events {
            let json = try #require(message.json, "payload is JSON: \(message.payload)")
            let kind = try #require(json["kind"]?.string)
            if validators[kind] == nil { validators[kind] = try JSONSchemaValidator.forKind(kind) }
            let problems = validators[kind]!.validate(json)
            #expect(problems.isEmpty, "\(message.topic): \(problems)")
            // Topic layout.
            let beaconID = json["beacon_id"]?.string ?? ""
            switch kind {
            case "sighting": #expect(message.topic == "beaconbridge/gw1/sighting/\(beaconID)")
            case "presence": #expect(message.topic == "beaconbridge/gw1/presence/\(beaconID)")
            case "region": #expect(message.topic == "beaconbridge/gw1/region/kitchen/\(beaconID)")
            case "telemetry": #expect(message.topic == "beaconbridge/gw1/telemetry")
            default: Issue.record("unexpected kind \(kind)")
            }
            // Sequence numbers increase in publish order and ids are <gateway>-<seq>.
            guard case let .int(sequence) = json["seq"] else {
                Issue.record("seq missing")
                continue
            }
            #expect(sequence > lastSequence)
            #expect(json["id"]?.string == "gw1-\(sequence)")
            lastSequence = sequence
        }
        // 30 events + telemetry, and after each of the 5 `away`s the sighting that clears RSSI and distance.
        #expect(events.count == 36)
        #expect(Set(validators.keys) == ["sighting", "presence", "region", "telemetry"])
        let counters = publisher.counters
        #expect(counters.acknowledged == 36)
        #expect(counters.queued == 0)
        #expect(try await database.stats().rows == 0)
    }
}
