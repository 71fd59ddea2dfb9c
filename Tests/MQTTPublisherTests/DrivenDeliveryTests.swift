import BeaconCore
import MQTTPublisher
import Synchronization
import TestSupport
import Testing

/// Delivery driven by the owner's task (`EventPublisher.drive(wake:)`, the daemon's loop; issue 15, fewer
/// hand-overs): envelopes go to the transport inside `admit`, acknowledgements while live wait for the next
/// turn without waking the driver, connection changes wake it once, and `release()`/`stop()` hand delivery
/// back to `run()`'s task with the usual stop semantics. A fake transport plays the broker.
/// How often the publisher woke its driver.
final class WakeCounter: Sendable {
    let count = Atomic<Int>(0)
}

@Suite struct DrivenDeliveryTests {
    func publisher(box: TransportBox, window: Int = 1000) throws -> EventPublisher {
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "fake")
        return try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: 1, inflightWindow: window), layout: layout),
            outbox: nil,
            transport: { _, onEvent in
                let fake = FakeTransport(onEvent: onEvent)
                box.transport.withLock { $0 = fake }
                return fake
            })
    }

    func envelopes(_ range: ClosedRange<Int>) -> [EventEnvelope] {
        range.map { sequence in
            EventEnvelope(
                id: "driven-\(sequence)", gatewayID: "fake", sequence: UInt64(sequence), captureTime: 1, kind: .region,
                topic: "beaconbridge/fake/region/r/\(sequence)", qos: 1, retain: false, payload: "{}")
        }
    }

    /// Plays the driver until `condition` holds: a turn (`service`) whenever woken, and every 50 ms anyway (60 s).
    func drive(_ publisher: EventPublisher, until what: String, _ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<1200 {
            await publisher.service()
            if condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("timed out after 60 s waiting for \(what)")
    }

    func regionTopics(_ fake: FakeTransport) -> [String] { fake.publishedTopics.filter { $0.contains("/region/") } }

    @Test func admitDeliversInlineAndLiveAcknowledgementsWaitForTheNextTurn() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box)
        let wakes = WakeCounter()
        publisher.drive { wakes.count.add(1, ordering: .relaxed) }
        try await withRunningPublisher(publisher) {
            try await drive(publisher, until: "connected") { publisher.counters.live }
            let batch = envelopes(1...50)
            await publisher.admit(batch)
            // Sent and flushed by the time `admit` returns: no other task took part.
            #expect(regionTopics(box.fake) == batch.map(\.topic))
            #expect(box.fake.state.withLock { $0.unflushed } == 0)
            #expect(publisher.counters.inflight == 50)

            let before = wakes.count.load(ordering: .relaxed)
            let ids = box.fake.state.withLock { state in state.published.suffix(50).map(\.id) }
            for id in ids { box.fake.onEvent(.acknowledged(messageID: id)) }
            // Live, 50 of a window of 1000 in flight: no wake-up for them...
            #expect(wakes.count.load(ordering: .relaxed) == before)
            #expect(publisher.counters.acknowledged == 0)
            // ...they are taken on the next turn.
            await publisher.service()
            #expect(publisher.counters.acknowledged == 50)
            #expect(publisher.counters.inflight == 0)

            // A connection change does wake the driver, once until it takes its inputs.
            box.fake.dropAndReconnect()
            #expect(wakes.count.load(ordering: .relaxed) == before + 1)
            try await drive(publisher, until: "live again") {
                publisher.counters.live && publisher.counters.connects == 2
            }
        }
    }

    @Test func acknowledgementsWakeTheDriverOnceHalfTheWindowWaits() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box, window: 8)
        let wakes = WakeCounter()
        publisher.drive { wakes.count.add(1, ordering: .relaxed) }
        try await withRunningPublisher(publisher) {
            try await drive(publisher, until: "connected") { publisher.counters.live }
            await publisher.admit(envelopes(1...4))
            #expect(publisher.counters.inflight == 4)
            let before = wakes.count.load(ordering: .relaxed)
            let id = box.fake.state.withLock { $0.published.last!.id }
            box.fake.onEvent(.acknowledged(messageID: id))
            #expect(wakes.count.load(ordering: .relaxed) == before + 1)
            await publisher.service()
            #expect(publisher.counters.acknowledged == 1)
        }
    }

    @Test func releaseHandsDeliveryBackToRunAndStopStoresWhatIsInFlight() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box)
        publisher.drive {}
        try await withRunningPublisher(publisher) {
            try await drive(publisher, until: "connected") { publisher.counters.live }
            await publisher.admit(envelopes(1...10))
            #expect(publisher.counters.inflight == 10)
            publisher.release()
            // Nobody calls `service()` any more: `run()`'s task delivers.
            box.fake.state.withLock { $0.acknowledgeInsidePublish = true }
            publisher.publish(envelopes(11...20))
            try await waitUntil("run() delivered after release", timeout: 60) {
                publisher.counters.acknowledged == 10
            }
            #expect(regionTopics(box.fake).count == 20)
        }
        // The ten never acknowledged were in flight at the stop: handed to the (memory) outbox, which ends
        // with the process and says so.
        #expect(publisher.counters.dropped["not_persisted"] == 10)
        #expect(publisher.counters.inflight == 0)
    }
}
