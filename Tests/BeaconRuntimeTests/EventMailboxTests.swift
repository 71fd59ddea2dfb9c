import BeaconFormats
import BeaconRuntime
import Testing

@Suite struct EventMailboxTests {
    static func batch(_ range: Range<Int>) -> [CapturedHCIEvent] {
        range.map { CapturedHCIEvent(timestamp: Double($0), bytes: [0x3E, 0x01, UInt8(truncatingIfNeeded: $0)]) }
    }

    static func times(_ item: EventMailbox<String>.Item) -> [Double]? {
        guard case let .events(batches) = item else { return nil }
        return batches.flatMap { $0.map(\.timestamp) }
    }

    @Test func everyWaitingBatchComesOutInOneItemInOrder() async {
        let mailbox = EventMailbox<String>(capacity: 100)
        #expect(mailbox.offer(Self.batch(0..<3)) == HCIEventOffer(accepted: true))
        #expect(mailbox.offer(Self.batch(3..<5)) == HCIEventOffer(accepted: true))
        #expect(mailbox.counters.waiting == 5)
        let item = await mailbox.next()
        #expect(Self.times(item) == [0, 1, 2, 3, 4])
        #expect(mailbox.counters == .init(delivered: 5, dropped: 0, droppedControls: 0, waiting: 0))
    }

    @Test func recycledBuffersComeBackEmptyWithTheirCapacityAtMostSpareLimitOfThem() async {
        let mailbox = EventMailbox<String>(capacity: 1_000)
        #expect(mailbox.spareBatch() == nil)
        for start in stride(from: 0, to: 300, by: 100) {
            var batch: [CapturedHCIEvent] = []
            batch.reserveCapacity(256)
            batch.append(contentsOf: Self.batch(start..<start + 100))
            _ = mailbox.offer(batch)
        }
        guard case var .events(batches) = await mailbox.next() else {
            Issue.record("expected the offered batches")
            return
        }
        #expect(batches.count == 3)
        mailbox.recycle(&batches)
        #expect(batches.isEmpty)
        var spares: [[CapturedHCIEvent]] = []
        while let spare = mailbox.spareBatch() { spares.append(spare) }
        #expect(spares.count == EventMailbox<String>.spareLimit)
        for spare in spares {
            #expect(spare.isEmpty)
            #expect(spare.capacity >= 256)
        }
        // Recycling changes nothing that is counted or waiting.
        #expect(mailbox.counters == .init(delivered: 300, dropped: 0, droppedControls: 0, waiting: 0))
    }

    @Test(arguments: [false, true])
    func theHandedOverBufferItselfComesBackAsTheSpare(waiting: Bool) async {
        let mailbox = EventMailbox<String>(capacity: 1_000)
        var batch: [CapturedHCIEvent] = []
        batch.reserveCapacity(256)
        batch.append(contentsOf: Self.batch(0..<10))
        let offered = batch.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        if waiting {
            // On a pool thread, which `deliverWaiting` must not block: it cannot here (10 events, capacity 1,000).
            #expect(mailbox.deliverWaiting(batch))
        } else {
            _ = mailbox.offer(batch)
        }
        batch = []
        let item = await mailbox.next()
        guard case var .events(batches) = consume item else {
            Issue.record("expected the offered batch")
            return
        }
        var seen = 0
        for taken in batches { seen += taken.count }
        #expect(seen == 10)
        mailbox.recycle(&batches)
        // What a source takes for its next batch (`HCIEventSink.nextBatch`): that very buffer, then new ones.
        let spare = mailbox.nextBatch(capacity: 64)
        #expect(spare.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } == offered)
        #expect(spare.isEmpty && spare.capacity >= 256)
        let fresh = mailbox.nextBatch(capacity: 64)
        #expect(fresh.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } != offered)
        #expect(fresh.isEmpty && fresh.capacity >= 64)
    }

    @Test func offerBeyondCapacityDropsTheOldestAndCountsThem() async {
        let mailbox = EventMailbox<String>(capacity: 4)
        _ = mailbox.offer(Self.batch(0..<3))
        #expect(mailbox.offer(Self.batch(3..<5)) == HCIEventOffer(accepted: true, dropped: 1))
        #expect(Self.times(await mailbox.next()) == [1, 2, 3, 4])
        // A batch larger than the capacity alone keeps its newest events.
        #expect(mailbox.offer(Self.batch(10..<16)) == HCIEventOffer(accepted: true, dropped: 2))
        #expect(Self.times(await mailbox.next()) == [12, 13, 14, 15])
        #expect(mailbox.counters.dropped == 3)
        #expect(mailbox.counters.delivered == 11)
    }

    @Test func controlsGoFirstAndTheOldestControlIsDroppedBeyondItsCapacity() async {
        let mailbox = EventMailbox<String>(capacity: 10, controlCapacity: 2)
        _ = mailbox.offer(Self.batch(0..<2))
        #expect(mailbox.post("a"))
        #expect(mailbox.post("b"))
        #expect(mailbox.post("c"))
        guard case let .control(first) = await mailbox.next() else {
            Issue.record("control expected")
            return
        }
        guard case let .control(second) = await mailbox.next() else {
            Issue.record("control expected")
            return
        }
        #expect([first, second] == ["b", "c"])
        #expect(mailbox.counters.droppedControls == 1)
        #expect(Self.times(await mailbox.next()) == [0, 1])
    }

    /// A poke wakes the consumer only when nothing else would: it never displaces a control or a batch, and
    /// several pokes are one.
    @Test func pokesComeLastAndCoalesce() async {
        let mailbox = EventMailbox<String>(capacity: 10)
        mailbox.poke()
        mailbox.poke()
        guard case .poked = await mailbox.next() else {
            Issue.record("poke expected")
            return
        }
        mailbox.poke()
        _ = mailbox.offer(Self.batch(0..<2))
        #expect(mailbox.post("a"))
        guard case let .control(control) = await mailbox.next() else {
            Issue.record("control expected")
            return
        }
        #expect(control == "a")
        // The batch stands for the poke (the consumer looks at its own work after every item).
        #expect(Self.times(await mailbox.next()) == [0, 1])
        mailbox.poke()
        mailbox.finish()
        guard case .finished = await mailbox.next() else {
            Issue.record("finished expected")
            return
        }
        let woken = Task { await mailbox.next() }
        mailbox.close()
        guard case .finished = await woken.value else {
            Issue.record("finished expected after close")
            return
        }
    }

    @Test func aWaitingConsumerIsWokenByALaterOffer() async {
        let mailbox = EventMailbox<String>(capacity: 10)
        let consumer = Task { await mailbox.next() }
        // Whether the consumer is already suspended or not, the batch reaches it.
        _ = mailbox.offer(Self.batch(7..<9))
        #expect(Self.times(await consumer.value) == [7, 8])
    }

    @Test func deliverWaitsForRoomAndLosesNothing() async throws {
        let mailbox = EventMailbox<String>(capacity: 4)
        #expect(await mailbox.deliver(Self.batch(0..<3)))
        let producer = Task { await mailbox.deliver(Self.batch(3..<6)) }
        // The second batch does not fit beside the first: it waits (nothing dropped) until the consumer takes.
        try await Task.sleep(for: .milliseconds(50))
        #expect(mailbox.counters.waiting == 3)
        #expect(Self.times(await mailbox.next()) == [0, 1, 2])
        #expect(await producer.value)
        #expect(Self.times(await mailbox.next()) == [3, 4, 5])
        #expect(mailbox.counters.dropped == 0)
    }

    /// The thread form (the replay thread): blocks its thread, not a task, until the consumer makes room; a
    /// close releases it with false.
    @Test func deliverWaitingBlocksItsThreadUntilThereIsRoomAndLosesNothing() async throws {
        let mailbox = EventMailbox<String>(capacity: 4)
        #expect(mailbox.deliverWaiting(Self.batch(0..<3)))
        let returned = Latch<Bool>()
        #expect(DedicatedThread.start { returned.open(mailbox.deliverWaiting(Self.batch(3..<6))) } == 0)
        try await Task.sleep(for: .milliseconds(50))
        #expect(returned.value == nil)
        #expect(mailbox.counters.waiting == 3)
        #expect(Self.times(await mailbox.next()) == [0, 1, 2])
        #expect(await returned.wait() == true)
        #expect(Self.times(await mailbox.next()) == [3, 4, 5])
        #expect(mailbox.counters.dropped == 0)

        let refused = Latch<Bool>()
        #expect(mailbox.deliverWaiting(Self.batch(6..<9)))
        #expect(DedicatedThread.start { refused.open(mailbox.deliverWaiting(Self.batch(9..<12))) } == 0)
        try await Task.sleep(for: .milliseconds(50))
        #expect(refused.value == nil)
        mailbox.close()
        #expect(await refused.wait() == false)
        #expect(!mailbox.deliverWaiting(Self.batch(12..<13)))
    }

    @Test func finishHandsOutWhatWaitsThenFinished() async {
        let mailbox = EventMailbox<String>(capacity: 10)
        _ = mailbox.offer(Self.batch(0..<2))
        mailbox.finish()
        #expect(mailbox.offer(Self.batch(2..<3)) == .closed)
        #expect(await mailbox.deliver(Self.batch(2..<3)) == false)
        #expect(Self.times(await mailbox.next()) == [0, 1])
        guard case .finished = await mailbox.next() else {
            Issue.record("finished expected")
            return
        }
    }

    @Test func closeReleasesAWaitingProducerAndRefusesMore() async {
        let mailbox = EventMailbox<String>(capacity: 2)
        _ = mailbox.offer(Self.batch(0..<2))
        let producer = Task { await mailbox.deliver(Self.batch(2..<4)) }
        mailbox.close()
        #expect(await producer.value == false)
        #expect(mailbox.offer(Self.batch(4..<5)) == .closed)
        #expect(!mailbox.post("late"))
        guard case .finished = await mailbox.next() else {
            Issue.record("finished expected")
            return
        }
    }
}
