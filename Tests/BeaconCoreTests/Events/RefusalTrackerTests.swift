import BeaconDelivery
import BeaconEvents
import Testing

@Suite struct RefusalTrackerTests {
    @Test func reasonCodesBelow0x80AreAcceptance() {
        #expect(PublishRefusal.broker(reasonCode: 0x00) == nil)
        #expect(PublishRefusal.broker(reasonCode: 0x10) == nil)  // no matching subscribers: accepted
        let denied = try! #require(PublishRefusal.broker(reasonCode: 0x87))
        #expect(denied.permanent)
        #expect(denied.reason == "broker refused: not authorized (0x87)")
        let quota = try! #require(PublishRefusal.broker(reasonCode: 0x97))
        #expect(!quota.permanent)
        #expect(quota.reason.contains("quota exceeded"))
    }

    @Test func aPermanentRefusalDeadLettersAtOnce() {
        var tracker = RefusalTracker(maxAttempts: 5)
        let refusal = PublishRefusal.broker(reasonCode: 0x87)!
        #expect(tracker.refused(7, refusal) == .deadLetter(refusal, attempts: 1))
        #expect(tracker.attempts.isEmpty)
    }

    @Test func aTransientRefusalIsRetriedUpToTheBound() {
        var tracker = RefusalTracker(maxAttempts: 3)
        let quota = PublishRefusal.broker(reasonCode: 0x97)!
        #expect(tracker.refused(7, quota) == .retry(attempts: 1))
        #expect(tracker.refused(7, quota) == .retry(attempts: 2))
        #expect(tracker.refused(7, quota) == .deadLetter(quota, attempts: 3))
        #expect(tracker.attempts[7] == nil)
    }

    @Test func acceptanceClearsTheCount() {
        var tracker = RefusalTracker(maxAttempts: 2)
        let quota = PublishRefusal.broker(reasonCode: 0x97)!
        #expect(tracker.refused(7, quota) == .retry(attempts: 1))
        tracker.accepted(7)
        #expect(tracker.refused(7, quota) == .retry(attempts: 1))
    }

    @Test func dropsRightAfterTheSameEventDeadLetterItAfterTheBound() {
        var tracker = RefusalTracker(maxAttempts: 5, suspectWindow: 2)
        for attempt in 1...4 {
            #expect(tracker.connectionDropped(oldest: 42, secondsSinceSent: 0.01) == .retry(attempts: attempt))
        }
        #expect(
            tracker.connectionDropped(oldest: 42, secondsSinceSent: 0.01)
                == .deadLetter(.connectionDropped(attempts: 5), attempts: 5))
    }

    @Test func aFlappingLinkNeverBuildsUpACount() {
        var tracker = RefusalTracker(maxAttempts: 5, suspectWindow: 2)
        // Drops long after the oldest event was sent say nothing about it.
        for _ in 0..<50 { #expect(tracker.connectionDropped(oldest: 42, secondsSinceSent: 30) == nil) }
        // Drops that hit a different oldest event each time (it was delivered on the next connection).
        for sequence in UInt64(100)..<150 {
            #expect(tracker.connectionDropped(oldest: sequence, secondsSinceSent: 0.5) == .retry(attempts: 1))
            tracker.accepted(sequence)
        }
        #expect(tracker.attempts.isEmpty)
    }

    @Test func theTableOfCountsIsBounded() {
        var tracker = RefusalTracker(maxAttempts: 5)
        for sequence in UInt64(0)..<UInt64(RefusalTracker.trackedLimit + 500) {
            _ = tracker.connectionDropped(oldest: sequence, secondsSinceSent: 0)
        }
        #expect(tracker.attempts.count == RefusalTracker.trackedLimit)
        #expect(tracker.attempts[0] == nil)
    }

    @Test func theMemoryOutboxMovesDeadLettersAsideAndRequeuesThem() async throws {
        let outbox = MemoryOutbox(maxRows: 100)
        let envelopes = (1...4).map { sequence in
            EventEnvelope(
                id: "gw-\(sequence)", gatewayID: "gw", sequence: UInt64(sequence), captureTime: 1, kind: .region,
                topic: "t/\(sequence)", qos: 1, retain: false, payload: "{}")
        }
        await outbox.append(envelopes)
        await outbox.deadLetter([DeadLetter(envelope: envelopes[1], reason: "broker refused", attempts: 1, time: 5)])
        #expect(await outbox.peek(after: nil, limit: 10).map(\.sequence) == [1, 3, 4])
        #expect(await outbox.stats().deadLetters == 1)
        #expect(await outbox.deadLetters(limit: 10).map(\.reason) == ["broker refused"])
        #expect(await outbox.requeueDeadLetters() == 1)
        #expect(await outbox.peek(after: nil, limit: 10).map(\.sequence) == [1, 2, 3, 4])
        #expect(await outbox.stats().deadLetters == 0)
    }
}
