import BeaconDelivery
import BeaconEvents
import BeaconModel
import BeaconRuntime

/// The adapter around the delivery state machine (`DeliveryMachine`), held by the publisher's `DeliveryDriver`
/// (one owner from start to stop: never shared, never Sendable). It feeds the machine its inputs and performs the actions it returns on
/// the transport and the outbox, answering each answered action at once (depth first), so the machine sees the
/// outcome of one send or read before it decides the next.
final class PublisherDelivery {
    enum Outcome { case running, finished }

    let publisher: EventPublisher
    let transport: any MessageTransport
    let settings: OutboxSettings
    var machine: DeliveryMachine
    var store: any EventOutbox
    /// Drops counted by outboxes replaced by the memory fallback, and the current outbox's (from its stats).
    var storeDropBase: [OutboxDropReason: Int] = [:]
    var storeDropped: [OutboxDropReason: Int] = [:]
    var backlog = (rows: 0, bytes: 0, deadLetters: 0)
    /// Events the memory outbox still held when `run()` ended (no usable database): gone with the process.
    var discardedAtStop = 0
    /// The database's drop counts when it failed (`RecoveringOutbox`), and when a write-back was last tried
    /// (monotonic seconds).
    var databaseDropsAtFailure: [OutboxDropReason: Int] = [:]
    var lastWriteBackTry = SystemClock.monotonic()
    /// When the outbox file was last checked (`checkOutboxFile`; monotonic seconds).
    var lastFileCheck = SystemClock.monotonic()
    var transportError: String?
    var lastMachineError: String?
    /// The acknowledgements being handled; its storage goes back and forth with the inbox's list.
    var acknowledgements: [PublisherInbox.Acknowledgement] = []

    init(publisher: EventPublisher) {
        self.publisher = publisher
        self.transport = publisher.transport
        let configuration = publisher.configuration
        self.settings = configuration.outbox
        let layout = configuration.layout
        func availability(_ payload: String) -> [ControlMessage] {
            var messages = [ControlMessage(topic: layout.availability, payload: payload, qos: 1, retain: true)]
            if layout.settings.espresense.enabled, let topic = layout.espresenseRoomStatus {
                messages.append(ControlMessage(topic: topic, payload: payload, qos: 1, retain: true))
            }
            return messages
        }
        let degraded = publisher.store == nil
        var deliverySettings = DeliverySettings(
            window: configuration.mqtt.inflightWindow, batchSize: configuration.outbox.batchSize,
            sightingMaxAge: configuration.outbox.sightingMaxAge,
            online: availability("online"), offline: availability("offline"),
            homeAssistantStatus: layout.settings.homeAssistant.enabled ? layout.homeAssistantStatus : nil)
        deliverySettings.acknowledgesLiveEvents = configuration.acknowledgesLiveEvents
        machine = DeliveryMachine(settings: deliverySettings, degraded: degraded)
        store =
            publisher.store
            ?? MemoryOutbox(maxRows: configuration.outbox.memoryMaxRows, maxBytes: configuration.outbox.maxBytes)
        publishCounters()
    }

    func handle(_ input: EventPublisher.Input) async -> Outcome {
        switch input {
        case .mailbox: await run(.publish(publisher.mailbox.takeAll()))
        case let .envelopes(envelopes): await run(.publish(envelopes))
        case let .snapshot(envelopes): await run(.snapshot(envelopes))
        case let .discovery(messages): await run(.discovery(messages))
        case let .reply(message, expiresAt): await run(.reply(message, expiresAt: expiresAt))
        case let .subscribe(filter, qos): await run(.subscribe(filter: filter, qos: qos))
        case let .client(event): await handle(event)
        case .acknowledgements:
            publisher.inbox.takeAcknowledgements(into: &acknowledgements)
            for entry in acknowledgements {
                await run(.acknowledged(messageID: entry.messageID, reasonCode: Int(entry.reasonCode)), at: entry.at)
            }
        case .tick:
            await checkOutboxFile()
            await tryWriteBack()
            await run(.tick)
        case .stop: await run(.stop)
        }
        transport.flush()
        publishCounters()
        return ended ? .finished : .running
    }

    /// Delivery is over (the machine finished after `.stop`).
    var ended: Bool { machine.mode == .finished }

    func handle(_ event: TransportEvent) async {
        switch event {
        case .connected:
            await run(.connected)
        case let .connectionFailed(error, retryIn):
            transportError = error.description
            publisher.sharedCounters.withLock { $0.connectionFailures += 1 }
            publisher.notify(.connectionFailed(error, retryIn: retryIn))
        case let .disconnected(error, retryIn):
            await run(.disconnected)
            transportError = error.description
            publisher.notify(.disconnected(error, retryIn: retryIn))
        case let .acknowledged(messageID):
            await run(.acknowledged(messageID: messageID, reasonCode: 0))
        case let .refused(messageID, reasonCode):
            await run(.acknowledged(messageID: messageID, reasonCode: Int(reasonCode)))
        case let .message(topic, payload):
            await run(.inbound(InboundMessage(topic: topic, payload: payload)))
        case .subscribed:
            break
        case .stopped:
            await run(.transportStopped)
        }
    }

    /// Feeds one input to the machine and performs the actions, answers first. `time`: when the input happened, if
    /// not now (an acknowledgement taken on a later turn: its arrival, so the latency histogram does not count the
    /// wait for the turn).
    func run(_ input: DeliveryInput, at time: Double? = nil) async {
        var stack = Array(machine.handle(input, now: time ?? publisher.configuration.now()).reversed())
        while let action = stack.popLast() {
            if let answer = await perform(action) {
                stack += machine.handle(answer, now: publisher.configuration.now()).reversed()
            }
        }
    }

    /// Performs one action; returns the input that answers it, if any.
    func perform(_ action: DeliveryAction) async -> DeliveryInput? {
        switch action {
        case let .send(envelope):
            switch transport.publish(
                topic: envelope.topic, payload: envelope.payload, qos: envelope.qos, retain: envelope.retain)
            {
            case let .success(messageID):
                return .sent(sequence: envelope.sequence, messageID: messageID)
            case let .failure(error):
                transportError = error.description
                let refusal =
                    error.permanent
                    ? PublishRefusal(
                        source: .client, code: Int(error.code), reason: "client refused: \(error.message)",
                        permanent: true)
                    : nil
                return .sendFailed(sequence: envelope.sequence, refusal: refusal)
            }
        case let .sendControl(message):
            _ = transport.publish(
                topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain)
            return nil
        case let .subscribe(filter, qos):
            if let error = transport.subscribe(filter, qos: qos) { transportError = error.description }
            return nil
        case let .notify(notice):
            publisher.notify(PublisherNotice(notice))
            return nil
        case .finish:
            return nil
        default:
            return await performOutbox(action)
        }
    }

    /// Whether acknowledgements should be handled as soon as they arrive: while draining or stopping (they
    /// drive the next read, the deletes, the end of the stop), or once half the in-flight window waits for
    /// them. Live with room in the window, they wait for the owner's next turn (a publish or a tick) when it
    /// waits elsewhere (the daemon's loop, `DeliveryDriver.start(wake:)`), which saves a wake-up per batch.
    var acknowledgementsUrgent: Bool {
        machine.mode != .live || machine.inflightCount * 2 >= publisher.configuration.mqtt.inflightWindow
    }

    /// Copies the figures into the shared counters, in one lock.
    func publishCounters() {
        let figures = machine.counters
        let mode = machine.mode
        let storeDrops = storeDropBase.merging(storeDropped, uniquingKeysWith: +)
        let machineError = figures.lastError != lastMachineError ? figures.lastError : nil
        lastMachineError = figures.lastError
        let transportError = self.transportError
        self.transportError = nil
        let backlog = self.backlog
        publisher.sharedCounters.withLock { counters in
            counters.delivery = figures
            var dropped = figures.dropped
            for (reason, count) in storeDrops { dropped[reason.rawValue, default: 0] += count }
            if discardedAtStop > 0 { dropped[PublisherDelivery.notPersisted, default: 0] += discardedAtStop }
            if let late = counters.dropped["publisher_stopped"] { dropped["publisher_stopped"] = late }
            counters.dropped = dropped
            counters.live = mode == .live
            counters.backlogRows = backlog.rows
            counters.backlogBytes = backlog.bytes
            counters.deadLetterRows = backlog.deadLetters
            if let transportError { counters.lastError = transportError }
            if let machineError { counters.lastError = machineError }
        }
    }
}

extension PublisherNotice {
    init(_ notice: DeliveryNotice) {
        switch notice {
        case .connected: self = .connected
        case let .snapshotRequested(homeAssistantOnline):
            self = .snapshotRequested(homeAssistantOnline ? .homeAssistantOnline : .connected)
        case let .eventsDropped(reason, count): self = .eventsDropped(reason: reason, count: count)
        case let .deadLettered(count, firstSequence, topic, reason):
            self = .deadLettered(count: count, firstSequence: firstSequence, topic: topic, reason: reason)
        case let .outboxFailed(message): self = .outboxFailed(message)
        }
    }
}
