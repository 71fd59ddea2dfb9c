import BeaconCore

/// The delivery state machine, owned by `EventPublisher.run()` (one task: never shared, never Sendable).
///
/// Modes: `live` (connected, outbox drained: events go straight to the broker) and `backlog` (disconnected,
/// or the outbox may hold rows: new events are appended behind them, and while connected the outbox is
/// drained in sequence order, each row deleted only after its acknowledgement).
final class PublisherDelivery {
    enum Outcome { case running, finished }

    struct InFlight {
        var envelope: EventEnvelope
        var fromOutbox: Bool
        /// Wall clock when handed to libmosquitto (for `RefusalTracker.connectionDropped`).
        var sentAt: Double
    }

    /// What `send` did with an envelope.
    enum SendResult {
        case sent
        /// The client library will never send it (too large, invalid topic): dead-letter it and go on.
        case refused(PublishRefusal)
        /// Not now (not connected, out of memory): keep it and try later.
        case notSent
    }

    let publisher: EventPublisher
    let client: MQTTClient
    let layout: TopicLayout
    let settings: OutboxSettings
    let window: Int
    var store: any EventOutbox
    var degraded = false
    var connected = false
    var live = false
    var inflight: [Int32: InFlight] = [:]
    var outboxInflight = 0
    /// Rows peeked from the outbox but not sent yet (window full), and the last sequence taken.
    var drainBatch: [EventEnvelope] = []
    var drainCursor: UInt64?
    var acknowledgedRows: [UInt64] = []
    /// Refused events: retried or moved to the dead-letter table (docs/outbox.md).
    var refusals = RefusalTracker()
    /// After a connection dropped right after several events were sent, one event at a time is in flight
    /// (so the next such drop names the event the broker refuses), until `probeLength` acknowledgements.
    var probing = false
    var probeAcknowledgements = 0
    static let probeLength = 32
    /// The in-flight window now: 1 while probing.
    var currentWindow: Int { probing ? 1 : window }
    var discovery: [ControlMessage] = []
    var stopping = false
    var stopDeadline = 0.0
    /// When stale rows were last expired (wall clock); expiry runs at most once a second.
    var lastExpiry = -Double.infinity
    /// Per-message counts gathered during one input and added to the shared counters in one lock.
    var tally = (published: 0, drained: 0, acknowledged: 0)

    init(publisher: EventPublisher) {
        self.publisher = publisher
        self.client = publisher.client
        self.layout = publisher.configuration.layout
        self.settings = publisher.configuration.outbox
        self.window = max(1, publisher.configuration.mqtt.inflightWindow)
        if let store = publisher.store {
            self.store = store
        } else {
            self.store = MemoryOutbox(maxRows: publisher.configuration.outbox.memoryMaxRows,
                                      maxBytes: publisher.configuration.outbox.maxBytes)
            self.degraded = true
        }
        publisher.sharedCounters.withLock { $0.outboxDegraded = degraded }
    }

    func handle(_ input: EventPublisher.Input) async -> Outcome {
        defer { publishTally() }
        switch input {
        case let .publish(envelopes): await accept(envelopes)
        case let .client(event): await handle(event)
        case let .discovery(messages):
            discovery = messages
            if connected { publishControl(discovery) }
        case .acknowledgements:
            for entry in publisher.ackInbox.takeAll() {
                if let refusal = PublishRefusal.broker(reasonCode: Int(entry.reasonCode)) {
                    await refused(entry.messageID, refusal)
                } else {
                    await acknowledge(entry.messageID, drainAfter: false)
                }
            }
            if connected && !live && !stopping { await drain() }
        case .tick: await tick()
        case .stop:
            stopping = true
            stopDeadline = publisher.configuration.now() + 2
        }
        if stopping && (inflight.isEmpty || !connected || publisher.configuration.now() >= stopDeadline) {
            await finish()
            return .finished
        }
        return .running
    }

    // MARK: events in

    func accept(_ envelopes: [EventEnvelope]) async {
        guard connected && live && !stopping else {
            await append(envelopes)
            return
        }
        var index = envelopes.startIndex
        sending: while index < envelopes.endIndex, inflight.count < currentWindow {
            switch send(envelopes[index], fromOutbox: false) {
            case .sent: index += 1
            case let .refused(refusal):
                await deadLetter([envelopes[index]], refusal, attempts: 1)
                index += 1
            case .notSent: break sending
            }
        }
        if index < envelopes.endIndex {
            live = false
            await append(Array(envelopes[index...]))
            await drain()
        }
    }

    func handle(_ event: MQTTClientEvent) async {
        switch event {
        case .connected:
            connected = true
            live = false
            drainBatch = []
            drainCursor = nil
            publisher.sharedCounters.withLock { $0.connected = true; $0.connects += 1 }
            var control = [ControlMessage(topic: layout.availability, payload: "online", qos: 1, retain: true)]
            if layout.settings.espresense.enabled, let topic = layout.espresenseRoomStatus {
                control.append(ControlMessage(topic: topic, payload: "online", qos: 1, retain: true))
            }
            publishControl(control)
            if layout.settings.homeAssistant.enabled {
                client.subscribe(layout.homeAssistantStatus, qos: 1)
                publishControl(discovery)
            }
            publisher.notify(.connected)
            publisher.notify(.snapshotRequested(.connected))
            await drain()
        case let .connectionFailed(error, retryIn):
            publisher.sharedCounters.withLock { $0.connectionFailures += 1; $0.lastError = error.description }
            publisher.notify(.connectionFailed(error, retryIn: retryIn))
        case let .disconnected(error, retryIn):
            await connectionLost()
            publisher.sharedCounters.withLock { $0.lastError = error.description }
            publisher.notify(.disconnected(error, retryIn: retryIn))
        case let .acknowledged(messageID):
            await acknowledge(messageID, drainAfter: true)
        case let .refused(messageID, reasonCode):
            if let refusal = PublishRefusal.broker(reasonCode: Int(reasonCode)) { await refused(messageID, refusal) }
        case let .message(topic, payload):
            if topic == layout.homeAssistantStatus, String(decoding: payload, as: UTF8.self) == "online" {
                publishControl(discovery)
                publisher.notify(.snapshotRequested(.homeAssistantOnline))
            }
        case .stopped:
            connected = false
        }
    }

    func tick() async {
        if connected && !live && inflight.count < currentWindow { await drain() }
        await refreshBacklog()
    }

    // MARK: sending

    /// Hands one envelope to libmosquitto and tracks it until acknowledged.
    func send(_ envelope: EventEnvelope, fromOutbox: Bool) -> SendResult {
        switch client.publish(topic: envelope.topic, payload: envelope.payload, qos: envelope.qos, retain: envelope.retain) {
        case let .success(messageID):
            inflight[messageID] = InFlight(envelope: envelope, fromOutbox: fromOutbox, sentAt: publisher.configuration.now())
            tally.published += 1
            if fromOutbox {
                outboxInflight += 1
                tally.drained += 1
            }
            return .sent
        case let .failure(error):
            publisher.sharedCounters.withLock { $0.lastError = error.description }
            guard error.isPermanentPublishRefusal else { return .notSent }
            return .refused(PublishRefusal(source: .client, code: Int(error.code),
                                           reason: "client refused: \(error.message)", permanent: true))
        }
    }

    func publishTally() {
        let tally = self.tally, inflightCount = inflight.count
        self.tally = (0, 0, 0)
        publisher.sharedCounters.withLock {
            $0.published += tally.published
            $0.drained += tally.drained
            $0.acknowledged += tally.acknowledged
            $0.inflight = inflightCount
        }
    }

    func publishControl(_ messages: [ControlMessage]) {
        for message in messages {
            _ = client.publish(topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain)
        }
    }

    func acknowledge(_ messageID: Int32, drainAfter: Bool) async {
        // Unknown ids: control messages, or acknowledgements of messages resent by libmosquitto after a
        // reconnect whose tracking was already handed back to the outbox.
        guard let entry = inflight.removeValue(forKey: messageID) else { return }
        tally.acknowledged += 1
        refusals.accepted(entry.envelope.sequence)
        if probing {
            probeAcknowledgements += 1
            if probeAcknowledgements >= PublisherDelivery.probeLength { probing = false }
        }
        if entry.fromOutbox {
            outboxInflight -= 1
            acknowledgedRows.append(entry.envelope.sequence)
            if acknowledgedRows.count >= settings.batchSize || outboxInflight == 0 { await flushDeletes() }
        }
        if drainAfter && connected && !live && !stopping { await drain() }
    }

    /// Sends outbox rows in sequence order while the window has room; switches to live once the outbox has
    /// nothing left past the cursor.
    func drain() async {
        guard connected && !live && !stopping else { return }
        while inflight.count < currentWindow {
            if drainBatch.isEmpty {
                let now = publisher.configuration.now()
                if now - lastExpiry >= 1 {
                    lastExpiry = now
                    await storeCall { [self] in try await store.expire(before: now - settings.sightingMaxAge) }
                }
                let rows = await storeCall { [self] in try await store.peek(after: drainCursor, limit: settings.batchSize) } ?? []
                if rows.isEmpty {
                    live = true
                    await refreshBacklog()
                    return
                }
                drainBatch = rows
                drainBatch.reverse()
            }
            guard let next = drainBatch.last else { return }
            switch send(next, fromOutbox: true) {
            case .sent: break
            case let .refused(refusal): await deadLetter([next], refusal, attempts: 1)
            case .notSent: return
            }
            drainBatch.removeLast()
            drainCursor = next.sequence
        }
    }

    // MARK: losing the connection, stopping

    /// The connection broke: QoS 0 events in flight are lost (counted); QoS 1/2 events that came straight
    /// from `publish` go to the outbox (libmosquitto may also resend them: at least once); rows sent from the
    /// outbox are still stored and will be drained again.
    func connectionLost() async {
        connected = false
        live = false
        publisher.sharedCounters.withLock { $0.connected = false }
        await suspectOldestInflight()
        await requeueInflight(keepQoS0: false)
        drainBatch = []
        drainCursor = nil
    }

    func requeueInflight(keepQoS0: Bool) async {
        let entries = inflight.values.filter { !$0.fromOutbox }.map(\.envelope).sorted { $0.sequence < $1.sequence }
        inflight.removeAll()
        outboxInflight = 0
        publisher.sharedCounters.withLock { $0.inflight = 0 }
        let lost = keepQoS0 ? 0 : entries.filter { $0.qos == 0 }.count
        if lost > 0 {
            publisher.sharedCounters.withLock { $0.dropped["connection_lost", default: 0] += lost }
            publisher.notify(.eventsDropped(reason: "connection_lost", count: lost))
        }
        await append(keepQoS0 ? entries : entries.filter { $0.qos > 0 })
        await flushDeletes()
    }

    func finish() async {
        await requeueInflight(keepQoS0: true)
        var control = [ControlMessage(topic: layout.availability, payload: "offline", qos: 1, retain: true)]
        if layout.settings.espresense.enabled, let topic = layout.espresenseRoomStatus {
            control.append(ControlMessage(topic: topic, payload: "offline", qos: 1, retain: true))
        }
        if connected { publishControl(control) }
        await refreshBacklog()
    }
}
