import BeaconDelivery
import BeaconEvents
import BeaconModel
import MQTTPublisher
import Synchronization
import TestSupport
import Testing

/// A transport without a broker: records what the publisher hands it; the test plays the broker's part.
final class FakeTransport: MessageTransport {
    struct State {
        var published: [(id: Int32, topic: String, payload: String)] = []
        var subscriptions: [String] = []
        var nextID: Int32 = 1
        /// Acknowledge each message inside `publish`, before it returns (libmosquitto may do that).
        var acknowledgeInsidePublish = false
        /// Messages published since the last `flush()`, and the size of each flushed batch (flushes with
        /// nothing published are not recorded).
        var unflushed = 0
        var flushedBatches: [Int] = []
    }
    let state = Mutex(State())
    let onEvent: @Sendable (TransportEvent) -> Void

    init(onEvent: @escaping @Sendable (TransportEvent) -> Void) { self.onEvent = onEvent }

    func start() { onEvent(.connected) }
    func stop() async { onEvent(.stopped) }

    func publish(topic: String, payload: String, qos: UInt8, retain: Bool) -> Result<Int32, TransportFailure> {
        let (id, early) = state.withLock { state -> (Int32, Bool) in
            defer { state.nextID += 1 }
            state.published.append((state.nextID, topic, payload))
            state.unflushed += 1
            return (state.nextID, state.acknowledgeInsidePublish)
        }
        if early { onEvent(.acknowledged(messageID: id)) }
        return .success(id)
    }

    func flush() {
        state.withLock { state in
            if state.unflushed > 0 { state.flushedBatches.append(state.unflushed) }
            state.unflushed = 0
        }
    }

    func subscribe(_ filter: String, qos: UInt8) -> TransportFailure? {
        state.withLock { $0.subscriptions.append(filter) }
        return nil
    }

    func dropAndReconnect() {
        onEvent(
            .disconnected(
                TransportFailure(transport: "MQTT", operation: "loop", code: 7, message: "The connection was lost."),
                retryIn: 0.1))
        onEvent(.connected)
    }

    var subscriptions: [String] { state.withLock { $0.subscriptions } }
    var publishedTopics: [String] { state.withLock { $0.published.map(\.topic) } }
}

final class TransportBox: Sendable {
    let transport = Mutex<FakeTransport?>(nil)
    var fake: FakeTransport { transport.withLock { $0! } }
}

@Suite struct FakeTransportTests {
    func publisher(box: TransportBox, homeAssistant: Bool = false) throws -> EventPublisher {
        var topics = TopicSettings()
        topics.homeAssistant.enabled = homeAssistant
        let layout = TopicLayout(settings: topics, gatewayID: "fake")
        return try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: 1), layout: layout), outbox: nil,
            transport: { _, onEvent in
                let fake = FakeTransport(onEvent: onEvent)
                box.transport.withLock { $0 = fake }
                return fake
            })
    }

    @Test func inboundMessagesReachMatchingSubscribersAndSubscriptionsAreRenewedOnReconnect() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box, homeAssistant: true)
        let claims = publisher.subscribe("rooms/+/claims", qos: 1)
        try await withRunningPublisher(publisher) {
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            try await waitUntil("subscribed", timeout: 60) { box.fake.subscriptions.contains("rooms/+/claims") }
            #expect(box.fake.subscriptions.contains("homeassistant/status"))
            box.fake.onEvent(.message(topic: "rooms/hall/other", payload: Array("no".utf8)))
            box.fake.onEvent(.message(topic: "rooms/kitchen/claims", payload: Array("yes".utf8)))
            var iterator = claims.makeAsyncIterator()
            let first = await iterator.next()
            #expect(first == InboundMessage(topic: "rooms/kitchen/claims", payload: Array("yes".utf8)))
            box.fake.dropAndReconnect()
            try await waitUntil("subscribed again", timeout: 60) {
                box.fake.subscriptions.filter { $0 == "rooms/+/claims" }.count == 2
            }
            #expect(box.fake.subscriptions.filter { $0 == "homeassistant/status" }.count == 2)
        }
    }

    /// `count` QoS 1 region events numbered from 1, one topic each.
    func regionEnvelopes(_ count: Int, idPrefix: String) -> [EventEnvelope] {
        (1...count).map { sequence in
            EventEnvelope(
                id: "\(idPrefix)-\(sequence)", gatewayID: "fake", sequence: UInt64(sequence), captureTime: 1,
                kind: .region,
                topic: "beaconbridge/fake/region/r/\(sequence)", qos: 1, retain: false, payload: "{}")
        }
    }

    @Test func acknowledgementsThatOvertakePublishAreCounted() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box)
        let envelopes = regionEnvelopes(200, idPrefix: "fake")
        try await withRunningPublisher(publisher) {
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            box.fake.state.withLock { $0.acknowledgeInsidePublish = true }
            publisher.publish(envelopes)
            try await waitUntil("all acknowledged", timeout: 60) { publisher.counters.acknowledged == 200 }
            #expect(publisher.counters.inflight == 0)
            #expect(box.fake.publishedTopics.filter { $0.contains("/region/") } == envelopes.map(\.topic))
        }
    }

    /// One batch of events from the pipeline is one hand-over to the network side (issue 15: publishing a batch
    /// costs one wake-up of the network thread, not one per message).
    @Test func aBatchOfEventsIsFlushedToTheTransportOnce() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box)
        let envelopes = regionEnvelopes(50, idPrefix: "batch")
        try await withRunningPublisher(publisher) {
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            let before = box.fake.state.withLock { $0.published.count }
            publisher.publish(envelopes)
            try await waitUntil("all sent", timeout: 60) {
                box.fake.state.withLock { $0.published.count } >= before + 50
            }
            try await waitUntil("flushed", timeout: 60) { box.fake.state.withLock { $0.unflushed } == 0 }
            let batches = box.fake.state.withLock { $0.flushedBatches }
            #expect(batches.contains { $0 >= 50 }, "flushed batches: \(batches)")
        }
    }
}
