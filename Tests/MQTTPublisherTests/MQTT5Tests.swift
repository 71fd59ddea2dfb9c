import BeaconEvents
import Foundation
import MQTTPublisher
import TestSupport
import Testing

/// The same delivery over MQTT 5 (`mqtt.protocol: "5"`), and a refusal reported with MQTT 5's reason text.
@Suite(.serialized) struct MQTT5Tests {
    @Test func eventsArriveOverMQTT5() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "v5gw")
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/v5gw/#"])
        try await subscriber.start()
        var settings = loopbackSettings(port: broker.port)
        settings.protocolVersion = .v5
        let publisher = try EventPublisher(configuration: .init(mqtt: settings, layout: layout), outbox: nil)
        var encoder = SequencedEncoder(layout: layout, database: nil)
        let envelopes = try await encoder.encode((0..<20).map { EventFactory.region($0, kind: .enter) })
        try await withRunningPublisher(publisher) {
            try await waitUntil("connected over MQTT 5", timeout: 60) { publisher.counters.connected }
            publisher.publish(envelopes)
            try await waitUntil("events over MQTT 5", timeout: 60) {
                subscriber.messages.filter { $0.json?["id"] != nil }.count >= envelopes.count
            }
        }
        await subscriber.stop()
        #expect(subscriber.messages.compactMap { $0.json?["id"]?.string } == envelopes.map(\.id))
        #expect(broker.log.contains("as beaconbridge-v5gw (p5"), "the broker saw protocol level 5")
    }

    @Test func refusalCarriesTheMQTT5ReasonText() async throws {
        let broker = try MosquittoProcess(allowAnonymous: false)
        try await broker.start()
        var settings = loopbackSettings(port: broker.port)
        settings.protocolVersion = .v5
        let events = EventLog()
        let client = try MQTTClient(options: MQTTClientOptions(settings: settings, clientID: "v5-anon")) {
            events.append($0)
        }
        client.start()
        try await waitUntil("two refused attempts", timeout: 60) { events.failures.count >= 2 }
        await client.stop()
        let failure = try #require(events.failures.first)
        #expect(failure.isRefused)
        #expect(failure.refusal == 135)  // MQTT 5 "Not authorized"
        #expect(failure.description.contains("Not authorized"), "\(failure)")
    }
}
