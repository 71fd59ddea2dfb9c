import Testing

@testable import BeaconDelivery
@testable import BeaconEvents

/// The delivery latency histogram: buckets, the acceptance ring, and the machine observing acknowledgements.
@Suite struct DeliveryLatencyTests {
    typealias H = DeliveryHarness

    @Test func observationsFallInTheirBucketAndAccumulate() {
        var latency = DeliveryLatency()
        for seconds in [0.001, 0.005, 0.0051, 0.3, 7, 4000, -1, .nan] { latency.observe(seconds) }
        #expect(latency.count == 8)
        // -1 and NaN count as 0; 0.005 is in its own bucket (le is inclusive).
        #expect(latency.counts[0] == 4)
        #expect(latency.counts[1] == 1)
        let cumulative = latency.cumulative
        #expect(cumulative.count == DeliveryLatency.bounds.count + 1)
        #expect(cumulative.first { $0.upperBound == 0.5 }?.count == 6)
        #expect(cumulative.first { $0.upperBound == 10 }?.count == 7)
        #expect(cumulative.last?.upperBound == .infinity && cumulative.last?.count == 8)
        #expect(abs(latency.sum - (0.001 + 0.005 + 0.0051 + 0.3 + 7 + 4000)) < 1e-9)
    }

    @Test func theAcceptanceRingFindsEachEventsBatch() {
        var log = AcceptanceLog()
        #expect(log.acceptance(of: 1) == nil)
        log.note(first: 10, at: 100)
        log.note(first: 13, at: 100)  // the same time: joins the batch before
        log.note(first: 20, at: 101)
        #expect(log.acceptance(of: 9) == nil)
        #expect(log.acceptance(of: 10) == 100)
        #expect(log.acceptance(of: 19) == 100)
        #expect(log.acceptance(of: 20) == 101)
        #expect(log.acceptance(of: 5000) == 101)
        // Full: the oldest batches go.
        for index in 0..<(AcceptanceLog.capacity + 5) { log.note(first: UInt64(100 + index), at: 200 + Double(index)) }
        #expect(log.acceptance(of: 20) == nil)
        #expect(log.acceptance(of: 104) == nil)
        #expect(log.acceptance(of: 105) == 205)
        #expect(
            log.acceptance(of: UInt64(100 + AcceptanceLog.capacity + 4)) == 200 + Double(AcceptanceLog.capacity + 4))
        // A sequence that does not grow starts over.
        log.note(first: 3, at: 300)
        #expect(log.acceptance(of: 105) == 300)
        #expect(log.acceptance(of: 2) == nil)
    }

    /// Live events and outbox rows are observed from their acceptance to their acknowledgement.
    @Test func theMachineObservesAcceptanceToAcknowledgement() {
        var h = H(window: 4, batchSize: 3)
        h.connectAndDrain()
        #expect(h.machine.mode == .live)
        h.feed(.publish(H.envelopes(1...2)))
        h.now += 0.02
        h.acknowledgeEverything()
        var latency = h.machine.counters.latency
        #expect(latency.count == 2)
        #expect(latency.cumulative.first { $0.upperBound == 0.025 }?.count == 2)
        #expect(latency.cumulative.first { $0.upperBound == 0.01 }?.count == 0)
        // Accepted while disconnected (to the outbox), acknowledged 40 s later after a reconnect.
        h.transportUp = false
        h.feed(.disconnected)
        h.feed(.publish(H.envelopes(3...4)))
        h.now += 40
        h.transportUp = true
        h.connectAndDrain()
        latency = h.machine.counters.latency
        #expect(latency.count == 4)
        #expect(latency.cumulative.first { $0.upperBound == 30 }?.count == 2)
        #expect(latency.cumulative.first { $0.upperBound == 60 }?.count == 4)
        #expect(h.machine.counters.latencyUnknown == 0)
    }

    /// Rows stored before this run (sequences older than any batch it accepted) are counted apart.
    @Test func rowsFromBeforeTheStartAreNotObserved() {
        var h = H(window: 4, batchSize: 3)
        h.outbox = H.envelopes(1...3)
        h.connectAndDrain()
        #expect(h.machine.counters.acknowledged == 3)
        #expect(h.machine.counters.latency.count == 0)
        #expect(h.machine.counters.latencyUnknown == 3)
    }
}
