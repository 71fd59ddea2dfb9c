import BeaconEvents

/// Delivery to the broker as a pure state machine (docs/architecture.md, "Delivery"): it takes inputs with the
/// time (`DeliveryInput`) and returns what to do (`DeliveryAction`); the adapter (`PublisherDelivery` in
/// MQTTPublisher) performs the actions on a transport and an outbox and feeds the results back. No I/O, no
/// clock: every transition is unit-tested without a broker.
///
/// States (`State`, DeliveryMachine+State.swift; each carries only its own data): `disconnected` (new events go
/// to the outbox), `draining` (connected; the outbox is read in sequence order with one cursor, each row
/// deleted only after its acknowledgement; new events queue behind it in the outbox), `live` (outbox drained:
/// events go straight to the transport while the in-flight window has room, the rest spills to the outbox in
/// one transaction), `stopping` (waiting up to `stopGrace` for acknowledgements), `finished`. Every transition
/// is an assignment of `state` in this file or its extensions, decided by one switch over the input
/// (`handle`). Orthogonal to the state: the answer outstanding (`awaiting`), the window of events in flight
/// (kept while stopping), probing, the snapshot slot, subscriptions and discovery.
///
/// At most one answered action (a send or a read) is outstanding at a time, so the machine always knows the
/// outcome of what it asked before it asks again.
public struct DeliveryMachine: Sendable {
    public enum Mode: Sendable, Equatable { case disconnected, draining, live, stopping, finished }

    /// Where an event in flight came from.
    public enum Origin: Sendable, Equatable { case live, outbox, snapshot }

    struct InFlight: Sendable {
        package var envelope: EventEnvelope
        package var origin: Origin
        var sentAt: Double
    }

    enum Awaiting: Sendable {
        case nothing
        case send(EventEnvelope, Origin)
        case read
    }

    public let settings: DeliverySettings
    public internal(set) var counters = DeliveryCounters()

    var state = State.disconnected
    var awaiting = Awaiting.nothing
    var inflight: [Int32: InFlight] = [:]
    var outboxInflight = 0
    /// Acknowledgements that overtook the answer of the send they belong to (libmosquitto may fire `on_publish`
    /// before `mosquitto_publish` returns), keyed by message id.
    var earlyAcks: [Int32: Int] = [:]
    var acknowledgedRows: [UInt64] = []
    var lastExpiry = -Double.infinity
    var refusals = RefusalTracker()
    /// When the broker last refused an event with a reason code (MQTT 5) on this connection.
    var lastReasonCodeRefusal = -Double.infinity
    /// Probing (one event in flight at a time to find one the broker refuses by disconnecting): the
    /// acknowledgements since it began; nil when not probing.
    var probeAcknowledgements: Int?
    package var discovery: [ControlMessage] = []
    package var subscriptions: [(filter: String, qos: UInt8)] = []
    /// Command replies waiting for a connection (`.reply`), oldest first.
    var heldReplies: [(message: ControlMessage, expiresAt: Double)] = []
    /// Replies held at most while disconnected; beyond, the oldest is dropped (`reply_overflow`).
    public static let maxHeldReplies = 64
    var snapshot = SnapshotSlot()
    /// When each batch was accepted, for the latency histogram (`counters.latency`).
    var acceptances = AcceptanceLog()

    /// - Parameter degraded: true when there is no usable database (the adapter starts with a memory outbox).
    public init(settings: DeliverySettings, degraded: Bool = false) {
        self.settings = settings
        counters.outboxDegraded = degraded
        if let topic = settings.homeAssistantStatus { subscriptions.append((topic, 1)) }
    }

    /// The in-flight window now: 1 while probing for a refused event.
    var currentWindow: Int { probing ? 1 : settings.window }

    /// Events in flight now.
    public var inflightCount: Int { inflight.count }

    /// Snapshot entries waiting to be sent.
    public var pendingSnapshotCount: Int { snapshot.count }

    /// Handles one input at wall-clock time `now` and returns the actions to perform, in order.
    public mutating func handle(_ input: DeliveryInput, now: Double) -> [DeliveryAction] {
        var actions: [DeliveryAction] = []
        switch input {
        case let .publish(envelopes):
            unblockSends()
            accept(envelopes, now: now, into: &actions)
        case let .snapshot(envelopes):
            counters.snapshotSuperseded += snapshot.replace(with: envelopes)
        case let .discovery(messages):
            discovery = messages
            if connected && !finished { actions += messages.map(DeliveryAction.sendControl) }
        case let .reply(message, expiresAt):
            reply(message, expiresAt: expiresAt, now: now, into: &actions)
        case let .subscribe(filter, qos):
            if let index = subscriptions.firstIndex(where: { $0.filter == filter }) {
                subscriptions[index].qos = qos
            } else {
                subscriptions.append((filter, qos))
            }
            if connected && !finished { actions.append(.subscribe(filter: filter, qos: qos)) }
        case .connected:
            connectionUp(into: &actions)
        case .disconnected:
            connectionLost(now: now, into: &actions)
        case .transportStopped:
            if connected { connectionLost(now: now, into: &actions) }
        case let .sent(sequence, messageID):
            sent(sequence, messageID: messageID, now: now, into: &actions)
        case let .sendFailed(sequence, refusal):
            sendFailed(sequence, refusal, now: now, into: &actions)
        case let .acknowledged(messageID, reasonCode):
            if case .send = awaiting, inflight[messageID] == nil {
                earlyAcks[messageID] = reasonCode
                return actions
            }
            acknowledged(messageID, reasonCode: reasonCode, now: now, into: &actions)
        case let .inbound(message):
            if let topic = settings.homeAssistantStatus, message.topic == topic, message.text == "online", connected {
                actions += discovery.map(DeliveryAction.sendControl)
                actions.append(.notify(.snapshotRequested(homeAssistantOnline: true)))
            }
        case let .rows(rows):
            if case .read = awaiting { awaiting = .nothing }
            received(rows, into: &actions)
        case let .appended(count):
            counters.queued += count
        case let .outboxFailed(operation, message):
            outboxFailed(operation, message, into: &actions)
        case .outboxRecovered:
            counters.outboxDegraded = false
        case .tick:
            unblockSends()
            expireReplies(now: now)
            actions.append(.refreshStats)
        case .stop:
            switch state {
            case .disconnected, .draining, .live:
                state = .stopping(
                    Stopping(deadline: now + settings.stopGrace, connected: connected, unsent: unsentLiveEvents))
            case .stopping, .finished:
                break
            }
        }
        if case let .stopping(stopping) = state, case .nothing = awaiting,
            inflight.isEmpty || !stopping.connected || now >= stopping.deadline
        {
            finish(into: &actions)
        } else {
            pump(now: now, into: &actions)
        }
        counters.inflight = inflight.count
        return actions
    }

    // MARK: command replies

    package mutating func reply(
        _ message: ControlMessage, expiresAt: Double, now: Double, into actions: inout [DeliveryAction]
    ) {
        if connected && !finished {
            actions.append(.sendControl(message))
            return
        }
        guard !finished, expiresAt > now else {
            counters.dropped["reply_expired", default: 0] += 1
            return
        }
        expireReplies(now: now)
        if heldReplies.count >= Self.maxHeldReplies {
            heldReplies.removeFirst()
            counters.dropped["reply_overflow", default: 0] += 1
        }
        heldReplies.append((message, expiresAt))
    }

    mutating func expireReplies(now: Double) {
        let before = heldReplies.count
        heldReplies.removeAll { $0.expiresAt <= now }
        if heldReplies.count < before { counters.dropped["reply_expired", default: 0] += before - heldReplies.count }
    }

    // MARK: events in

    package mutating func accept(_ envelopes: [EventEnvelope], now: Double, into actions: inout [DeliveryAction]) {
        guard let first = envelopes.first else { return }
        acceptances.note(first: first.sequence, at: now)
        counters.snapshotSuperseded += snapshot.supersede(by: envelopes)
        if modifyLive({ $0.queue += envelopes }) == nil { actions.append(.append(envelopes)) }
    }

    mutating func connectionUp(into actions: inout [DeliveryAction]) {
        switch state {
        case .disconnected, .draining:
            state = .draining(Drain())
        case let .live(live):
            // Connected again without a break reported: drain from the start, the unsent behind the backlog.
            if !live.unsent.isEmpty { actions.append(.append(Array(live.unsent))) }
            state = .draining(Drain())
        case var .stopping(stopping):
            stopping.connected = true
            state = .stopping(stopping)
        case .finished:
            state = .finished(connected: true)
        }
        counters.connected = true
        counters.connects += 1
        guard !finished else { return }
        actions += settings.online.map(DeliveryAction.sendControl)
        actions += subscriptions.map { DeliveryAction.subscribe(filter: $0.filter, qos: $0.qos) }
        if settings.homeAssistantStatus != nil { actions += discovery.map(DeliveryAction.sendControl) }
        actions += heldReplies.map { DeliveryAction.sendControl($0.message) }
        heldReplies.removeAll()
        actions.append(.notify(.connected))
        actions.append(.notify(.snapshotRequested(homeAssistantOnline: false)))
    }

    /// Decides the next answered action, if none is outstanding: a send while the window has room, a read of
    /// the next outbox rows when the batch in hand is used up, or spilling the live queue to the outbox.
    package mutating func pump(now: Double, into actions: inout [DeliveryAction]) {
        guard case .nothing = awaiting, !sendsBlocked else { return }
        switch state {
        case .live:
            guard inflight.count < currentWindow else {
                spillLiveQueue(into: &actions)
                return
            }
            if let entry = snapshot.next() {
                awaiting = .send(entry, .snapshot)
                actions.append(.send(entry))
                return
            }
            let next = modifyLive { live -> EventEnvelope? in
                if live.head < live.queue.count {
                    live.head += 1
                    return live.queue[live.head - 1]
                }
                if !live.queue.isEmpty {
                    live.queue.removeAll(keepingCapacity: live.queue.count <= 4096)
                    live.head = 0
                }
                return nil
            }
            if let next = next ?? nil {
                awaiting = .send(next, .live)
                actions.append(.send(next))
            }
        case let .draining(drain):
            guard inflight.count < currentWindow else { return }
            if let next = drain.batch.last {
                awaiting = .send(next, .outbox)
                actions.append(.send(next))
                return
            }
            if now - lastExpiry >= 1 {
                lastExpiry = now
                actions.append(.expire(before: now - settings.sightingMaxAge))
            }
            awaiting = .read
            actions.append(.read(after: drain.cursor, limit: settings.batchSize))
        case .disconnected, .stopping, .finished:
            return
        }
    }

    /// The window is full while live events wait: they go to the outbox (one transaction) and the machine
    /// drains from there, so memory stays bounded and order holds.
    mutating func spillLiveQueue(into actions: inout [DeliveryAction]) {
        guard case let .live(live) = state else { return }
        if !live.unsent.isEmpty { actions.append(.append(Array(live.unsent))) }
        state = .draining(Drain(cursor: live.cursor, sendBlocked: live.sendBlocked))
    }

    package mutating func received(_ rows: [EventEnvelope], into actions: inout [DeliveryAction]) {
        switch state {
        case let .draining(drain):
            if rows.isEmpty {
                state = .live(Live(cursor: drain.cursor, sendBlocked: drain.sendBlocked))
                actions.append(.refreshStats)
            } else {
                modifyDrain { $0.batch = rows.reversed() }
            }
        case .live:
            // Only a read while draining is answered with rows; an empty answer changes nothing here.
            if rows.isEmpty { actions.append(.refreshStats) }
        case .disconnected, .stopping, .finished:
            return
        }
    }

    /// An outbox row was sent or passed over: the drain moves past it.
    mutating func tookDrainRow(_ sequence: UInt64) {
        modifyDrain { drain in
            if !drain.batch.isEmpty { drain.batch.removeLast() }
            drain.cursor = sequence
        }
    }

    // MARK: sending

    package mutating func sent(_ sequence: UInt64, messageID: Int32, now: Double, into actions: inout [DeliveryAction])
    {
        guard case let .send(envelope, origin) = awaiting, envelope.sequence == sequence else { return }
        awaiting = .nothing
        if finished {
            // Handed over after the stop stored everything else: store it too (at least once).
            if origin != .snapshot { actions.append(.append([envelope])) }
            return
        }
        inflight[messageID] = InFlight(envelope: envelope, origin: origin, sentAt: now)
        counters.published += 1
        switch origin {
        case .outbox:
            outboxInflight += 1
            counters.drained += 1
            tookDrainRow(sequence)
        case .snapshot:
            counters.snapshotSent += 1
        case .live:
            break
        }
        if let reasonCode = earlyAcks.removeValue(forKey: messageID) {
            acknowledged(messageID, reasonCode: reasonCode, now: now, into: &actions)
        }
        earlyAcks.removeAll()
    }

    package mutating func sendFailed(
        _ sequence: UInt64, _ refusal: PublishRefusal?, now: Double,
        into actions: inout [DeliveryAction]
    ) {
        guard case let .send(envelope, origin) = awaiting, envelope.sequence == sequence else { return }
        awaiting = .nothing
        earlyAcks.removeAll()
        if let refusal {
            counters.lastError = refusal.reason
            if origin == .outbox { tookDrainRow(sequence) }
            counters.refusedUnsent += 1
            deadLetter([envelope], refusal, attempts: 1, now: now, into: &actions)
            return
        }
        modifyDrain { $0.sendBlocked = true }
        modifyLive { $0.sendBlocked = true }
        switch origin {
        case .live:
            // Not now: it and everything behind it wait in the outbox, in order.
            modifyLive { $0.head -= 1 }
            spillLiveQueue(into: &actions)
        case .snapshot:
            snapshot.putBack(envelope)
        case .outbox:
            break
        }
    }

    package mutating func acknowledged(
        _ messageID: Int32, reasonCode: Int, now: Double, into actions: inout [DeliveryAction]
    ) {
        if let refusal = PublishRefusal.broker(reasonCode: reasonCode) {
            refused(messageID, refusal, now: now, into: &actions)
            return
        }
        // Unknown ids: control messages, or messages whose tracking went back to the outbox at a disconnect.
        guard let entry = inflight.removeValue(forKey: messageID) else { return }
        counters.acknowledged += 1
        if entry.origin != .snapshot {
            if let accepted = acceptances.acceptance(of: entry.envelope.sequence) {
                counters.latency.observe(now - accepted)
            } else {
                counters.latencyUnknown += 1
            }
        }
        refusals.accepted(entry.envelope.sequence)
        if let probed = probeAcknowledgements {
            probeAcknowledgements = probed + 1 >= settings.probeLength ? nil : probed + 1
        }
        if entry.origin == .outbox {
            outboxInflight -= 1
            acknowledgedRows.append(entry.envelope.sequence)
            if acknowledgedRows.count >= settings.batchSize || outboxInflight == 0 { flushDeletes(into: &actions) }
        } else if entry.origin == .live, settings.acknowledgesLiveEvents {
            acknowledgedRows.append(entry.envelope.sequence)
            if acknowledgedRows.count >= settings.batchSize || inflight.isEmpty { flushDeletes(into: &actions) }
        }
    }

    mutating func flushDeletes(into actions: inout [DeliveryAction]) {
        guard !acknowledgedRows.isEmpty else { return }
        actions.append(.delete(acknowledgedRows))
        acknowledgedRows.removeAll(keepingCapacity: true)
    }

    // MARK: losing the connection, stopping

    /// The connection broke: QoS 0 live events in flight are lost (counted); QoS 1/2 live events go to the
    /// outbox (the transport may also resend them: at least once); outbox rows in flight are still stored and
    /// are read again from the start (the cursor is reset); snapshot entries in flight are forgotten (the next
    /// connection asks for a new snapshot).
    mutating func connectionLost(now: Double, into actions: inout [DeliveryAction]) {
        let wasConnected = connected
        let unsent = unsentLiveEvents
        switch state {
        case .disconnected, .draining, .live:
            state = .disconnected
        case var .stopping(stopping):
            stopping.connected = false
            stopping.unsent = []
            state = .stopping(stopping)
        case .finished:
            state = .finished(connected: false)
        }
        counters.connected = false
        if wasConnected { suspectOldestInflight(now: now, into: &actions) }
        requeueInflight(keepQoS0: false, into: &actions)
        if !unsent.isEmpty { actions.append(.append(unsent)) }
        earlyAcks.removeAll()
    }

    mutating func requeueInflight(keepQoS0: Bool, into actions: inout [DeliveryAction]) {
        let entries = inflight.values.filter { $0.origin == .live }.map(\.envelope).sorted { $0.sequence < $1.sequence }
        counters.snapshotSuperseded += inflight.values.filter { $0.origin == .snapshot }.count
        inflight.removeAll()
        outboxInflight = 0
        let lost = keepQoS0 ? 0 : entries.filter { $0.qos == 0 }.count
        if lost > 0 {
            counters.dropped["connection_lost", default: 0] += lost
            actions.append(.notify(.eventsDropped(reason: "connection_lost", count: lost)))
        }
        let kept = keepQoS0 ? entries : entries.filter { $0.qos > 0 }
        if !kept.isEmpty { actions.append(.append(kept)) }
        flushDeletes(into: &actions)
    }

    package mutating func finish(into actions: inout [DeliveryAction]) {
        let unsent = unsentLiveEvents
        state = .finished(connected: connected)
        requeueInflight(keepQoS0: true, into: &actions)
        if !unsent.isEmpty { actions.append(.append(unsent)) }
        counters.snapshotSuperseded += snapshot.removeAll()
        if connected { actions += settings.offline.map(DeliveryAction.sendControl) }
        actions.append(.refreshStats)
        actions.append(.finish)
    }
}
