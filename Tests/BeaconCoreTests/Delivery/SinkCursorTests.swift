import Testing

@testable import BeaconDelivery
@testable import BeaconEvents

/// The cursor of a sink that delivers from the outbox (the webhook): batches, passed-over kinds, backoff,
/// at-least-once. A fake outbox (rows and each sink's acknowledgements) and a fake sink drive the machine.
@Suite struct SinkCursorTests {
    static func envelope(_ sequence: UInt64, _ kind: EventKind = .presence) -> EventEnvelope {
        EventEnvelope(
            id: "gw-\(sequence)", gatewayID: "gw", sequence: sequence, captureTime: 1000, kind: kind,
            topic: "beaconbridge/gw/\(kind.rawValue)/b", qos: 1, retain: false, payload: #"{"seq":\#(sequence)}"#)
    }

    /// An outbox of rows with the webhook's acknowledgements, a sink answering from a script, the time.
    struct Harness {
        var machine: SinkCursor
        var rows: [EventEnvelope]
        var acknowledged: Set<UInt64> = []
        var received: [[UInt64]] = []
        var answers: [SinkOutcome] = []
        var notices: [SinkNotice] = []
        var now = 0.0

        init(rows: [EventEnvelope], batchSize: Int = 3, kinds: Set<EventKind> = [.presence, .region]) {
            machine = SinkCursor(
                settings: SinkCursor.Settings(batchSize: batchSize, kinds: kinds, retryMin: 1, retryMax: 8))
            self.rows = rows
        }

        /// Feeds the input and performs every action until the machine waits; bounded.
        mutating func run(_ input: SinkCursor.Input) {
            var pending = machine.handle(input, now: now)
            var steps = 0
            while !pending.isEmpty, steps < 10_000 {
                steps += 1
                let action = pending.removeFirst()
                switch action {
                case let .read(after, limit):
                    let page = rows.filter { $0.sequence > (after ?? 0) && !acknowledged.contains($0.sequence) }
                        .prefix(limit)
                    pending += machine.handle(.rows(Array(page)), now: now)
                case let .deliver(messages):
                    received.append(messages.map(\.sequence))
                    let answer = answers.isEmpty ? .acknowledged : answers.removeFirst()
                    pending += machine.handle(.delivered(answer), now: now)
                case let .acknowledge(sequences):
                    acknowledged.formUnion(sequences)
                case let .notify(notice):
                    notices.append(notice)
                }
            }
        }

        mutating func advance(to time: Double) {
            now = time
            run(.tick)
        }
    }

    @Test func deliversEveryWantedEventInBatchesAndPassesOverOtherKinds() {
        let kinds: [EventKind] = [.presence, .sighting, .region, .sighting, .presence, .telemetry, .region, .presence]
        var h = Harness(rows: kinds.enumerated().map { Self.envelope(UInt64($0.offset + 1), $0.element) })
        h.run(.wake)
        #expect(h.received == [[1, 3, 5], [7, 8]])
        #expect(h.acknowledged == Set(1...8))
        #expect(h.machine.counters.delivered == 5)
        #expect(h.machine.counters.passedOver == 3)
        #expect(h.machine.state == .idle(until: 0.5))
    }

    @Test func aFailedBatchIsOfferedAgainFromTheSameCursorWithADoublingBackoff() {
        var h = Harness(rows: (1...4).map { Self.envelope($0) })
        h.answers = [
            .failed(reason: "HTTP 503", retryAfter: nil), .failed(reason: "HTTP 503", retryAfter: nil),
            .failed(reason: "timeout", retryAfter: nil),
        ]
        h.run(.wake)
        #expect(h.received == [[1, 2, 3]])
        #expect(h.acknowledged.isEmpty)
        #expect(h.machine.state == .backingOff(until: 1, attempt: 1))
        h.advance(to: 0.9)
        #expect(h.received.count == 1, "not before the backoff ends")
        h.advance(to: 1)
        #expect(h.machine.state == .backingOff(until: 3, attempt: 2))
        h.advance(to: 3)
        #expect(h.machine.state == .backingOff(until: 7, attempt: 3))
        h.advance(to: 7)
        #expect(h.received == [[1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3], [4]])
        #expect(h.acknowledged == Set(1...4))
        #expect(h.notices.last == .recovered(afterFailures: 3))
        #expect(h.machine.counters.failures == 3)
        #expect(h.machine.counters.delivered == 4)
    }

    @Test func theBackoffStopsAtItsMaximumAndHonoursRetryAfterUpToIt() {
        var h = Harness(rows: [Self.envelope(1)])
        h.answers = Array(repeating: .failed(reason: "HTTP 503", retryAfter: nil), count: 6)
        h.run(.wake)
        for _ in 0..<5 { h.advance(to: h.machine.deadline ?? h.now) }
        #expect(h.machine.state == .backingOff(until: h.now + 8, attempt: 6))
        var g = Harness(rows: [Self.envelope(1)])
        g.answers = [.failed(reason: "HTTP 429", retryAfter: 5), .failed(reason: "HTTP 429", retryAfter: 600)]
        g.run(.wake)
        #expect(g.machine.state == .backingOff(until: 5, attempt: 1))
        g.advance(to: 5)
        #expect(g.machine.state == .backingOff(until: 13, attempt: 2))
    }

    @Test func refusedEventsArePassedOverAndReported() {
        var h = Harness(rows: (1...4).map { Self.envelope($0) })
        h.answers = [.refused(reason: "HTTP 422")]
        h.run(.wake)
        #expect(h.received == [[1, 2, 3], [4]])
        #expect(h.acknowledged == Set(1...4))
        #expect(h.notices == [.refused(count: 3, firstSequence: 1, reason: "HTTP 422")])
        #expect(h.machine.counters.refused == 3)
        #expect(h.machine.counters.delivered == 1)
    }

    @Test func newRowsAreFoundOnTheNextLookAndTheCursorNeverGoesBack() {
        var h = Harness(rows: (1...2).map { Self.envelope($0) })
        h.run(.wake)
        h.rows += (3...4).map { Self.envelope($0) }
        h.advance(to: 0.2)
        #expect(h.received == [[1, 2]], "idle until the poll interval")
        h.advance(to: 0.5)
        #expect(h.received == [[1, 2], [3, 4]])
        #expect(h.machine.cursor == 4)
    }

    @Test func anOutboxFailureBacksOffAndReadsAgain() {
        var h = Harness(rows: [Self.envelope(1)])
        _ = h.machine.handle(.wake, now: 0)
        _ = h.machine.handle(.outboxFailed("disk I/O error"), now: 0)
        #expect(h.machine.state == .backingOff(until: 1, attempt: 1))
        h.advance(to: 1)
        #expect(h.received == [[1]])
        #expect(h.acknowledged == [1])
    }

    @Test func stopEndsDeliveryAndLeavesUnacknowledgedRowsInTheOutbox() {
        var h = Harness(rows: (1...5).map { Self.envelope($0) })
        h.answers = [.failed(reason: "HTTP 503", retryAfter: nil)]
        h.run(.wake)
        h.run(.stop)
        h.advance(to: 100)
        #expect(h.machine.state == .stopped)
        #expect(h.acknowledged.isEmpty)
        #expect(h.received == [[1, 2, 3]])
    }
}
