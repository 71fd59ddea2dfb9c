import BeaconEvents
import MQTTPublisher
import Synchronization
import TestSupport
import Testing

/// Delivery owned by one task from start to stop (`DeliveryDriver`, the daemon's loop; issues 15 and 32): envelopes
/// go to the transport inside `admit`, acknowledgements while live wait for the next turn without waking the
/// owner, connection changes wake it once, `deliver(until:)` delivers as inputs arrive, and `finish()` stops
/// with the usual stop semantics, on the same task. A fake transport plays the broker.
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

    /// Plays the owner until `condition` holds: a turn (`service`) every 50 ms (60 s).
    func drive(_ driver: DeliveryDriver, until what: String, _ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<1200 {
            await driver.service()
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
        try await withStartedDriver(publisher, counting: wakes) { driver in
            try await drive(driver, until: "connected") { publisher.counters.live }
            let batch = envelopes(1...50)
            await driver.admit(batch)
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
            await driver.service()
            #expect(publisher.counters.acknowledged == 50)
            #expect(publisher.counters.inflight == 0)

            // A connection change does wake the driver, once until it takes its inputs.
            box.fake.dropAndReconnect()
            #expect(wakes.count.load(ordering: .relaxed) == before + 1)
            try await drive(driver, until: "live again") {
                publisher.counters.live && publisher.counters.connects == 2
            }
        }
    }

    @Test func acknowledgementsWakeTheDriverOnceHalfTheWindowWaits() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box, window: 8)
        let wakes = WakeCounter()
        try await withStartedDriver(publisher, counting: wakes) { driver in
            try await drive(driver, until: "connected") { publisher.counters.live }
            await driver.admit(envelopes(1...4))
            #expect(publisher.counters.inflight == 4)
            let before = wakes.count.load(ordering: .relaxed)
            let id = box.fake.state.withLock { $0.published.last!.id }
            box.fake.onEvent(.acknowledged(messageID: id))
            #expect(wakes.count.load(ordering: .relaxed) == before + 1)
            await driver.service()
            #expect(publisher.counters.acknowledged == 1)
        }
    }

    /// The owner delivers what other tasks publish as it arrives (`deliver(until:)`), and its stop stores what is
    /// in flight, on the same task.
    @Test func deliverUntilTakesInputsAsTheyArriveAndFinishStoresWhatIsInFlight() async throws {
        let box = TransportBox()
        let publisher = try publisher(box: box)
        try await withStartedDriver(publisher, counting: nil) { driver in
            try await drive(driver, until: "connected") { publisher.counters.live }
            await driver.admit(envelopes(1...10))
            #expect(publisher.counters.inflight == 10)
            box.fake.state.withLock { $0.acknowledgeInsidePublish = true }
            publisher.publish(envelopes(11...20))
            let start = ContinuousClock.now
            await driver.deliver { publisher.counters.acknowledged == 10 || ContinuousClock.now - start > .seconds(60) }
            #expect(publisher.counters.acknowledged == 10)
            #expect(regionTopics(box.fake).count == 20)
        }
        // The ten never acknowledged were in flight at the stop: handed to the (memory) outbox, which ends
        // with the process and says so.
        #expect(publisher.counters.dropped["not_persisted"] == 10)
        #expect(publisher.counters.inflight == 0)
        // After the stop, nothing is taken any more.
        #expect(publisher.counters.dropped["publisher_stopped"] == nil)
    }

    /// Starts a driver on this task (its wake-ups counted in `wakes`), runs `body`, then finishes it (also when
    /// `body` throws).
    func withStartedDriver(
        _ publisher: EventPublisher, counting wakes: WakeCounter?, _ body: (DeliveryDriver) async throws -> Void
    ) async throws {
        let driver = publisher.makeDriver()
        await driver.start(wake: { wakes?.count.add(1, ordering: .relaxed) })
        do { try await body(driver) } catch {
            await driver.finish()
            throw error
        }
        await driver.finish()
        #expect(driver.ended)
    }
}
