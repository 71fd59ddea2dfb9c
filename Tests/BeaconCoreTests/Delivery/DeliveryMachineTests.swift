import Testing

@testable import BeaconDelivery
@testable import BeaconEvents
@testable import BeaconModel

/// Every transition of the delivery state machine, on a fake transport and outbox (no broker, no clock).
@Suite struct DeliveryMachineTests {
    typealias H = DeliveryHarness

    @Test func drainsTheBacklogInOrderThenGoesLive() {
        var h = H(window: 4, batchSize: 3)
        h.outbox = H.envelopes(1...10)
        #expect(h.machine.mode == .disconnected)
        h.feed(.connected)
        #expect(h.machine.mode == .draining)
        #expect(h.wire.map(\.sequence) == [1, 2, 3, 4])  // the window
        h.acknowledgeEverything()
        #expect(h.wire.map(\.sequence) == Array(1...10))
        #expect(h.outbox.isEmpty)
        #expect(h.machine.mode == .live)
        h.feed(.publish(H.envelopes(11...12)))
        #expect(h.wire.map(\.sequence) == Array(1...12))
        #expect(h.appendTransactions.isEmpty)  // live events went straight to the transport
        #expect(h.controls.first?.payload == "online")
        #expect(h.notices.contains(.snapshotRequested(homeAssistantOnline: false)))
        #expect(h.machine.counters.drained == 10 && h.machine.counters.acknowledged == 10)
    }

    @Test func newEventsWhileDisconnectedOrDrainingQueueBehindTheBacklog() {
        var h = H(window: 2, batchSize: 2)
        h.transportUp = false
        h.feed(.publish(H.envelopes(1...3)))
        #expect(h.appendTransactions == [[1, 2, 3]])
        h.transportUp = true
        h.feed(.connected)
        h.feed(.publish(H.envelopes(4...5)))  // draining: behind the backlog, in the outbox
        #expect(h.appendTransactions.last == [4, 5])
        h.acknowledgeEverything()
        #expect(h.wire.map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(h.outbox.isEmpty && h.machine.mode == .live)
    }

    @Test func reconnectDuringDrainRestartsFromTheOldestStoredRow() {
        var h = H(window: 4, batchSize: 3)
        h.outbox = H.envelopes(1...10)
        h.feed(.connected)
        h.acknowledge(2)  // 1 and 2 acknowledged; 3 and 4 in flight
        h.transportUp = false
        h.feed(.disconnected)
        #expect(h.machine.mode == .disconnected)
        #expect(h.outbox.map(\.sequence) == Array(3...10))  // acknowledged rows deleted, the rest kept
        h.unacknowledged = []  // the transport lost them
        h.wire = []
        h.connectAndDrain()
        #expect(h.wire.first?.sequence == 3)  // the cursor started over
        #expect(h.wire.map(\.sequence) == Array(3...10))
        #expect(h.outbox.isEmpty)
    }

    @Test func acknowledgementBeforePublishReturnsIsNotLost() {
        var machine = DeliveryMachine(settings: DeliverySettings(window: 4, batchSize: 10, sightingMaxAge: 60))
        _ = machine.handle(.connected, now: 0)
        _ = machine.handle(.rows([]), now: 0)  // outbox empty: live
        #expect(machine.mode == .live)
        let event = H.envelope(1)
        #expect(machine.handle(.publish([event]), now: 0) == [.send(event)])
        // The acknowledgement of message 7 arrives before the transport said it used id 7.
        #expect(machine.handle(.acknowledged(messageID: 7, reasonCode: 0), now: 0).isEmpty)
        _ = machine.handle(.sent(sequence: 1, messageID: 7), now: 0)
        #expect(machine.counters.acknowledged == 1)
        #expect(machine.inflightCount == 0)
    }

    /// With another sink reading the outbox (the webhook), live events are stored there too, so MQTT's
    /// acknowledgements of them are recorded (`.delete`); without one, live acknowledgements touch nothing.
    @Test func liveAcknowledgementsAreRecordedOnlyWhenAnotherSinkReadsTheOutbox() {
        for recorded in [false, true] {
            var settings = DeliverySettings(window: 4, batchSize: 10, sightingMaxAge: 60)
            settings.acknowledgesLiveEvents = recorded
            var machine = DeliveryMachine(settings: settings)
            _ = machine.handle(.connected, now: 0)
            _ = machine.handle(.rows([]), now: 0)
            #expect(machine.mode == .live)
            _ = machine.handle(.publish([H.envelope(1)]), now: 0)
            _ = machine.handle(.sent(sequence: 1, messageID: 7), now: 0)
            let actions = machine.handle(.acknowledged(messageID: 7, reasonCode: 0), now: 0)
            #expect(actions.contains(.delete([1])) == recorded, "recorded: \(recorded), \(actions)")
        }
    }

    @Test func aFullWindowSpillsLiveEventsToTheOutboxInOneTransaction() {
        var h = H(window: 2, batchSize: 100)
        h.connectAndDrain()
        h.feed(.publish(H.envelopes(1...50)))
        #expect(h.wire.map(\.sequence) == [1, 2])
        #expect(h.appendTransactions == [Array(3...50)])
        #expect(h.machine.mode == .draining)
        h.acknowledgeEverything()
        #expect(h.wire.map(\.sequence) == Array(1...50))
        #expect(h.outbox.isEmpty && h.machine.mode == .live)
    }

    @Test func stopWithABacklogStoresEverythingUnacknowledgedAndSaysOffline() {
        var h = H(window: 4)
        h.connectAndDrain()
        h.feed(.publish(H.envelopes(1...6)))  // 1-4 in flight, 5-6 spilled
        h.feed(.stop)
        #expect(h.machine.mode == .stopping)
        #expect(!h.finished)
        h.acknowledge(1)  // 1 delivered during the grace period
        #expect(!h.finished)
        h.now += 3  // past the grace period
        h.feed(.tick)
        #expect(h.finished && h.machine.mode == .finished)
        #expect(h.outbox.map(\.sequence) == [2, 3, 4, 5, 6])
        #expect(h.controls.last?.payload == "offline")
        // Published after the stop: stored too.
        h.feed(.publish(H.envelopes(7...7)))
        #expect(h.outbox.map(\.sequence).last == 7)
    }

    /// The stopping state carries the live events accepted and not sent yet: they are stored when the stop
    /// finishes (after the last acknowledgement), behind what was in flight.
    @Test func liveEventsNotSentWhenTheStopComesAreStoredWhenItFinishes() {
        var machine = DeliveryMachine(settings: DeliverySettings(window: 4, batchSize: 10, sightingMaxAge: 60))
        _ = machine.handle(.connected, now: 0)
        _ = machine.handle(.rows([]), now: 0)
        let events = [H.envelope(1), H.envelope(2)]
        #expect(machine.handle(.publish(events), now: 0) == [.send(events[0])])
        #expect(machine.handle(.stop, now: 0).isEmpty)  // the send's answer is outstanding
        #expect(machine.mode == .stopping)
        #expect(machine.handle(.sent(sequence: 1, messageID: 7), now: 0).isEmpty)  // no new send while stopping
        let actions = machine.handle(.acknowledged(messageID: 7, reasonCode: 0), now: 0)
        #expect(actions.contains(.append([events[1]])))
        #expect(actions.last == .finish)
        #expect(machine.mode == .finished)
    }

    /// A second connect without a break in between (live): the machine drains from the start again and the
    /// live events not sent yet wait behind the backlog in the outbox.
    @Test func aConnectWhileLiveDrainsAgainWithTheUnsentBehindTheBacklog() {
        var machine = DeliveryMachine(settings: DeliverySettings(window: 4, batchSize: 10, sightingMaxAge: 60))
        _ = machine.handle(.connected, now: 0)
        _ = machine.handle(.rows([]), now: 0)
        let events = [H.envelope(1), H.envelope(2), H.envelope(3)]
        #expect(machine.handle(.publish(events), now: 0) == [.send(events[0])])
        let actions = machine.handle(.connected, now: 0)
        #expect(actions.contains(.append(Array(events[1...]))))
        #expect(machine.mode == .draining)
        // The send's answer puts event 1 in flight; the drain then reads the outbox from the start.
        let next = machine.handle(.sent(sequence: 1, messageID: 7), now: 0)
        #expect(next.contains(.read(after: nil, limit: 10)))
        #expect(machine.inflightCount == 1)
    }

    @Test func stopWhileDisconnectedFinishesAtOnce() {
        var h = H()
        h.feed(.stop)
        #expect(h.finished)
        #expect(!h.controls.contains { $0.payload == "offline" })
    }

    @Test func stopFinishesAsSoonAsTheLastAcknowledgementArrives() {
        var h = H(window: 4)
        h.connectAndDrain()
        h.feed(.publish(H.envelopes(1...2)))
        h.feed(.stop)
        h.acknowledgeEverything()
        #expect(h.finished)
        #expect(h.outbox.isEmpty)
    }

    @Test func aFailingDatabaseSwitchesToMemoryOnceAndKeepsEveryEvent() {
        var h = H()
        h.transportUp = false
        h.failDatabase = true
        h.feed(.publish(H.envelopes(1...3)))
        #expect(h.memory)
        #expect(h.machine.counters.outboxDegraded)
        #expect(h.outbox.map(\.sequence) == [1, 2, 3])
        #expect(h.notices.contains { if case .outboxFailed = $0 { true } else { false } })
        #expect(h.machine.counters.queued == 3)
        // The memory outbox failing too (it does not in practice) is counted, never silent.
        h.failMemory = true
        h.feed(.publish(H.envelopes(4...5)))
        #expect(h.machine.counters.dropped["outbox_unavailable"] == 2)
        h.failMemory = false
        h.connectAndDrain()
        #expect(h.wire.map(\.sequence) == [1, 2, 3])
    }

    /// Issue 17.4: once the adapter has written the memory backlog back (`.outboxRecovered`), the machine is
    /// durable again, and a later failure switches to memory again (it was handled once per run).
    @Test func aRecoveredDatabaseIsDurableAgainAndASecondFailureIsHandledLikeTheFirst() {
        var h = H()
        h.transportUp = false
        h.failDatabase = true
        h.feed(.publish(H.envelopes(1...2)))
        #expect(h.machine.counters.outboxDegraded)
        h.memory = false
        h.feed(.outboxRecovered)
        #expect(!h.machine.counters.outboxDegraded)
        h.feed(.publish(H.envelopes(3...3)))
        let switches = h.actions.filter { $0 == .useMemoryOutbox }.count
        #expect(switches == 2)
        #expect(h.machine.counters.outboxDegraded)
        #expect(h.notices.filter { if case .outboxFailed = $0 { true } else { false } }.count == 2)
        #expect(h.machine.counters.dropped.isEmpty)
    }

    @Test func aFailingReadWhileDrainingSwitchesToMemoryAndGoesOn() {
        var h = H()
        h.outbox = H.envelopes(1...2)
        h.failDatabase = true
        h.feed(.connected)
        #expect(h.memory && h.machine.mode == .live)  // the memory outbox is empty
        h.feed(.publish(H.envelopes(3...3)))
        #expect(h.wire.map(\.sequence) == [3])
    }

    @Test func rowsTheBrokerRefusesAreDeadLetteredAndTheRestFlow() {
        var h = H(window: 1, batchSize: 10)
        h.outbox = H.envelopes(1...3)
        h.feed(.connected)
        h.acknowledge(1, reasonCode: 0x87)  // not authorized: permanent
        h.acknowledgeEverything()
        #expect(h.deadLetters.map(\.envelope.sequence) == [1])
        #expect(h.deadLetters.first?.reason.contains("not authorized") == true)
        #expect(h.wire.map(\.sequence) == [1, 2, 3])
        #expect(h.outbox.isEmpty)
        #expect(h.machine.counters.acknowledged == 2)  // the refused one is not counted as delivered
    }

    @Test func aTransientRefusalIsRetriedThenDeadLettered() {
        var h = H(window: 1, batchSize: 10)
        h.outbox = H.envelopes(1...2)
        h.feed(.connected)
        for _ in 0..<5 { h.acknowledge(1, reasonCode: 0x97) }  // quota exceeded, five times
        #expect(h.deadLetters.map(\.envelope.sequence) == [1])
        #expect(h.deadLetters.first?.attempts == 5)
        #expect(h.machine.counters.refusalsRetried == 4)
        h.acknowledgeEverything()
        #expect(h.wire.filter { $0.sequence == 1 }.count == 5)
        #expect(h.outbox.isEmpty)
    }

    @Test func anEventTheClientLibraryRefusesIsDeadLetteredAtOnce() {
        var h = H()
        h.refusedByClient = [2]
        h.connectAndDrain()
        h.feed(.publish(H.envelopes(1...3)))
        h.acknowledgeEverything()
        #expect(h.deadLetters.map(\.envelope.sequence) == [2])
        #expect(h.wire.map(\.sequence) == [1, 3])
        // Every accepted event's fate is counted: handed over, or refused before it could be.
        #expect(h.machine.counters.published == 2)
        #expect(h.machine.counters.refusedUnsent == 1)
    }

    @Test func aBrokerThatDropsTheConnectionRightAfterOneEventDeadLettersItAfterFiveDrops() {
        var h = H(window: 4)
        h.outbox = H.envelopes(1...2)
        // The first drop comes with two events in flight: culprit unknown, so one at a time from then on
        // (probing); each of the next five drops counts against the single event in flight.
        for round in 0..<6 {
            #expect(h.deadLetters.isEmpty, "dead-lettered too early, round \(round)")
            h.transportUp = true
            h.feed(.connected)
            h.unacknowledged = []
            h.transportUp = false
            h.feed(.disconnected)  // within the suspect window of the send
        }
        #expect(h.deadLetters.map(\.envelope.sequence) == [1])
        h.connectAndDrain()
        #expect(h.outbox.isEmpty)
        #expect(h.wire.last?.sequence == 2)
    }

    /// mosquitto 2.0 may close an MQTT 5 connection right after a PUBACK 0x87: that drop is explained by the
    /// refusal, so the event sent after the refused one is not blamed for it (it was never refused).
    @Test func aDropRightAfterAReasonCodeRefusalBlamesNoOtherEvent() {
        var h = H(window: 2, batchSize: 10)
        h.outbox = H.envelopes(1...2)
        h.feed(.connected)
        h.acknowledge(1, reasonCode: 0x87)
        h.transportUp = false
        h.feed(.disconnected)  // event 2 still in flight, within the suspect window
        #expect(h.deadLetters.map(\.envelope.sequence) == [1])
        #expect(h.machine.counters.refusalsRetried == 0)
        #expect(h.machine.probing == false)
        h.transportUp = true
        h.connectAndDrain()
        #expect(h.deadLetters.map(\.envelope.sequence) == [1])
        #expect(h.outbox.isEmpty)
        #expect(h.wire.last?.sequence == 2)
    }

    @Test func qos0EventsInFlightAtADisconnectAreCountedAsLost() {
        var h = H()
        h.connectAndDrain()
        h.feed(.publish([H.envelope(1, qos: 0), H.envelope(2, qos: 1)]))
        h.feed(.disconnected)
        #expect(h.machine.counters.dropped["connection_lost"] == 1)
        #expect(h.outbox.map(\.sequence) == [2])
    }

    @Test func aSendTheTransportCannotTakeWaitsInTheOutboxAndIsRetriedOnTheNextInput() {
        var h = H()
        h.connectAndDrain()
        h.transportUp = false  // e.g. the socket just went away, not reported yet
        h.feed(.publish(H.envelopes(1...3)))
        #expect(h.wire.isEmpty)
        #expect(h.outbox.map(\.sequence) == [1, 2, 3])
        h.transportUp = true
        h.feed(.tick)
        h.acknowledgeEverything()
        #expect(h.wire.map(\.sequence) == [1, 2, 3])
        #expect(h.outbox.isEmpty)
    }

    @Test func subscriptionsAreRenewedOnEveryConnect() {
        var h = H(homeAssistant: true)
        h.feed(.subscribe(filter: "rooms/+/claims", qos: 1))
        #expect(h.subscribes.isEmpty)  // not connected yet
        h.connectAndDrain()
        #expect(h.subscribes == ["homeassistant/status", "rooms/+/claims"])
        h.feed(.subscribe(filter: "rooms/#", qos: 0))
        #expect(h.subscribes.last == "rooms/#")
        h.feed(.disconnected)
        h.connectAndDrain()
        #expect(h.subscribes.suffix(3) == ["homeassistant/status", "rooms/+/claims", "rooms/#"])
    }

    @Test func homeAssistantOnlineResendsDiscoveryAndAsksForASnapshot() {
        var h = H(homeAssistant: true)
        let config = ControlMessage(topic: "homeassistant/sensor/x/config", payload: "{}", qos: 1, retain: true)
        h.feed(.discovery([config]))
        h.connectAndDrain()
        #expect(h.controls.filter { $0 == config }.count == 1)
        h.notices = []
        h.feed(.inbound(InboundMessage(topic: "homeassistant/status", payload: Array("online".utf8))))
        #expect(h.controls.filter { $0 == config }.count == 2)
        #expect(h.notices == [.snapshotRequested(homeAssistantOnline: true)])
        h.feed(.inbound(InboundMessage(topic: "homeassistant/status", payload: Array("offline".utf8))))
        #expect(h.controls.filter { $0 == config }.count == 2)
    }

    @Test func snapshotsAreCoalescedNeverStoredAndSentAfterTheBacklog() {
        var h = H(window: 4, batchSize: 10)
        h.transportUp = false
        h.feed(.publish([H.envelope(1, topic: "r/a")]))  // a real event, stored
        // Three reconnect snapshots of the same three topics while the broker flaps: one is left.
        for base in [UInt64(10), 20, 30] {
            h.feed(
                .snapshot([
                    H.envelope(base, topic: "r/a"), H.envelope(base + 1, topic: "r/b"),
                    H.envelope(base + 2, topic: "r/c"),
                ]))
        }
        #expect(h.machine.pendingSnapshotCount == 3)
        #expect(h.appendTransactions == [[1]])  // snapshot entries never reach the outbox
        // A later real event on r/b supersedes the snapshot's value there.
        h.feed(.publish([H.envelope(40, topic: "r/b")]))
        #expect(h.machine.pendingSnapshotCount == 2)
        h.connectAndDrain()
        #expect(h.wire.map(\.sequence) == [1, 40, 30, 32])  // backlog first, then the snapshot
        #expect(h.machine.counters.snapshotSent == 2)
        #expect(h.machine.counters.snapshotSuperseded == 7)
        #expect(h.outbox.isEmpty)
    }

    /// Snapshots without a sequence of their own (sequence 0: the calibration, room probabilities) on one topic:
    /// the newer replaces the older, which is never sent (before, both stayed queued and the older one went out).
    @Test func aNewerUnsequencedSnapshotOnATopicReplacesTheOlderOne() {
        var h = H(window: 4, batchSize: 10)
        h.transportUp = false
        func snapshot(_ value: Int, topic: String = "r/p") -> EventEnvelope {
            var envelope = H.envelope(0, topic: topic)
            envelope.payload = "{\"value\":\(value)}"
            return envelope
        }
        h.feed(.snapshot([snapshot(1), snapshot(7, topic: "r/q")]))
        h.feed(.snapshot([snapshot(2)]))
        // Within one batch the last entry for a topic is the one kept.
        h.feed(.snapshot([snapshot(3), snapshot(4)]))
        #expect(h.machine.pendingSnapshotCount == 2)
        h.connectAndDrain()
        #expect(h.wire.map(\.payload).sorted() == ["{\"value\":4}", "{\"value\":7}"])
        #expect(h.machine.counters.snapshotSuperseded == 3)
    }

    @Test func aSnapshotInFlightAtADisconnectIsNotStored() {
        var h = H(window: 4, batchSize: 10)
        h.connectAndDrain()
        h.feed(.snapshot([H.envelope(5, topic: "r/a"), H.envelope(6, topic: "r/b")]))
        h.feed(.tick)
        #expect(h.wire.map(\.sequence) == [5, 6])
        h.feed(.disconnected)
        #expect(h.outbox.isEmpty)
        #expect(h.machine.counters.snapshotSuperseded == 2)
    }

    @Test func stopDiscardsAPendingSnapshotAndCountsIt() {
        var h = H()
        h.feed(.snapshot([H.envelope(5, topic: "r/a")]))
        h.feed(.stop)
        #expect(h.finished && h.outbox.isEmpty)
        #expect(h.machine.counters.snapshotSuperseded == 1)
    }
}

@Suite struct TopicFilterTests {
    @Test(arguments: [
        ("a/b/c", "a/b/c", true), ("a/+/c", "a/x/c", true), ("a/+/c", "a/x/y/c", false), ("a/#", "a", true),
        ("a/#", "a/b/c", true), ("#", "a/b", true), ("+", "a/b", false), ("+/b", "/b", true), ("#", "$SYS/x", false),
        ("+/x", "$SYS/x", false), ("$SYS/#", "$SYS/x", true), ("a/b", "a/b/c", false), ("a/b/c", "a/b", false),
    ])
    func matches(filter: String, topic: String, expected: Bool) {
        #expect(TopicFilter(filter).matches(topic) == expected)
    }
}

/// Command replies (GATT over MQTT): sent at once when connected; held in memory while disconnected (never in
/// the outbox) and sent on the next connect, unless they expired first.
@Suite struct DeliveryMachineReplyTests {
    typealias H = DeliveryHarness

    static func reply(_ id: Int) -> ControlMessage {
        ControlMessage(topic: "gw/reply/gatt/read", payload: "{\"id\":\"\(id)\"}", qos: 1, retain: false)
    }

    @Test func connectedRepliesGoOutAtOnce() {
        var h = H()
        h.connectAndDrain()
        h.feed(.reply(Self.reply(1), expiresAt: h.now + 30))
        #expect(h.controls.last == Self.reply(1))
        #expect(h.appendTransactions.isEmpty)
    }

    @Test func heldWhileDisconnectedThenSentOrExpired() {
        var h = H()
        h.transportUp = false
        h.feed(.reply(Self.reply(1), expiresAt: h.now + 30))
        h.feed(.reply(Self.reply(2), expiresAt: h.now + 5))
        #expect(!h.controls.contains(Self.reply(1)))
        #expect(h.appendTransactions.isEmpty)  // never stored
        h.now += 10
        h.feed(.tick)  // 2 expired
        #expect(h.machine.counters.dropped["reply_expired"] == 1)
        h.transportUp = true
        h.connectAndDrain()
        #expect(h.controls.contains(Self.reply(1)) && !h.controls.contains(Self.reply(2)))
        h.feed(.disconnected)
        h.connectAndDrain()
        #expect(h.controls.filter { $0 == Self.reply(1) }.count == 1)  // sent once
        // Already expired when it arrives: dropped.
        h.transportUp = false
        h.feed(.disconnected)
        h.feed(.reply(Self.reply(3), expiresAt: h.now - 1))
        #expect(h.machine.counters.dropped["reply_expired"] == 2)
    }

    @Test func heldRepliesAreBounded() {
        var h = H()
        h.transportUp = false
        for id in 0..<(DeliveryMachine.maxHeldReplies + 5) { h.feed(.reply(Self.reply(id), expiresAt: h.now + 30)) }
        #expect(h.machine.counters.dropped["reply_overflow"] == 5)
        h.transportUp = true
        h.connectAndDrain()
        let replies = h.controls.filter { $0.topic == "gw/reply/gatt/read" }
        #expect(replies.count == DeliveryMachine.maxHeldReplies && replies.first == Self.reply(5))
    }
}
