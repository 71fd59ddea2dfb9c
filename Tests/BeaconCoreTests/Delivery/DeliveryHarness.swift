@testable import BeaconDelivery
@testable import BeaconEvents

/// Drives a `DeliveryMachine` the way the publisher's adapter does (answers first, depth first) against a
/// fake transport and an in-memory outbox, recording everything, so tests can check whole stories.
struct DeliveryHarness {
    var machine: DeliveryMachine
    var now = 1000.0
    /// The fake transport.
    var transportUp = true
    var nextMessageID: Int32 = 1
    /// Message ids handed to the transport and not acknowledged yet, with their envelopes, in send order.
    var unacknowledged: [(id: Int32, envelope: EventEnvelope)] = []
    /// Every event handed to the transport, in order.
    var wire: [EventEnvelope] = []
    var controls: [ControlMessage] = []
    var subscribes: [String] = []
    var refusedByClient: Set<UInt64> = []
    /// The outbox (sorted by sequence), the dead letters and what happened to the outbox.
    var outbox: [EventEnvelope] = []
    var deadLetters: [DeadLetter] = []
    var appendTransactions: [[UInt64]] = []
    var failDatabase = false
    var failMemory = false
    var memory = false
    var notices: [DeliveryNotice] = []
    var actions: [DeliveryAction] = []
    var finished = false

    init(window: Int = 4, batchSize: Int = 3, homeAssistant: Bool = false) {
        machine = DeliveryMachine(
            settings: DeliverySettings(
                window: window, batchSize: batchSize, sightingMaxAge: 60,
                online: [ControlMessage(topic: "gw/status", payload: "online", qos: 1, retain: true)],
                offline: [ControlMessage(topic: "gw/status", payload: "offline", qos: 1, retain: true)],
                homeAssistantStatus: homeAssistant ? "homeassistant/status" : nil))
    }

    static func envelope(_ sequence: UInt64, topic: String? = nil, qos: UInt8 = 1, kind: EventKind = .region)
        -> EventEnvelope
    {
        EventEnvelope(
            id: "g-\(sequence)", gatewayID: "g", sequence: sequence, captureTime: 1000, kind: kind,
            topic: topic ?? "t/\(sequence)", qos: qos, retain: false, payload: "{\"seq\":\(sequence)}")
    }

    static func envelopes(_ range: ClosedRange<UInt64>) -> [EventEnvelope] { range.map { envelope($0) } }

    mutating func feed(_ input: DeliveryInput) {
        var stack = Array(machine.handle(input, now: now).reversed())
        while let action = stack.popLast() {
            actions.append(action)
            if let answer = perform(action) { stack += machine.handle(answer, now: now).reversed() }
        }
    }

    /// Acknowledges the oldest `count` unacknowledged messages (all when nil) with a reason code.
    mutating func acknowledge(_ count: Int? = nil, reasonCode: Int = 0) {
        let taken = Array(unacknowledged.prefix(count ?? unacknowledged.count))
        unacknowledged.removeFirst(taken.count)
        for entry in taken { feed(.acknowledged(messageID: entry.id, reasonCode: reasonCode)) }
    }

    /// Acknowledges until nothing is in flight (bounded).
    mutating func acknowledgeEverything() {
        var rounds = 0
        while !unacknowledged.isEmpty && rounds < 10_000 {
            acknowledge(1)
            rounds += 1
        }
    }

    mutating func perform(_ action: DeliveryAction) -> DeliveryInput? {
        switch action {
        case let .send(envelope):
            if refusedByClient.contains(envelope.sequence) {
                return .sendFailed(
                    sequence: envelope.sequence,
                    refusal: PublishRefusal(
                        source: .client, code: 25, reason: "client refused: too large", permanent: true))
            }
            guard transportUp else { return .sendFailed(sequence: envelope.sequence, refusal: nil) }
            let id = nextMessageID
            nextMessageID += 1
            wire.append(envelope)
            unacknowledged.append((id, envelope))
            return .sent(sequence: envelope.sequence, messageID: id)
        case let .sendControl(message):
            controls.append(message)
            if transportUp { nextMessageID += 1 }
            return nil
        case let .subscribe(filter, _):
            subscribes.append(filter)
            return nil
        case let .append(envelopes):
            if failing { return .outboxFailed(.append(envelopes), message: "disk full") }
            appendTransactions.append(envelopes.map(\.sequence))
            let known = Set(outbox.map(\.sequence))
            outbox += envelopes.filter { !known.contains($0.sequence) }
            outbox.sort { $0.sequence < $1.sequence }
            return .appended(count: envelopes.count)
        case let .read(after, limit):
            if failing { return .outboxFailed(.read, message: "I/O error") }
            return .rows(Array(outbox.filter { after == nil || $0.sequence > after! }.prefix(limit)))
        case let .delete(sequences):
            if failing { return .outboxFailed(.delete(sequences), message: "I/O error") }
            outbox.removeAll { sequences.contains($0.sequence) }
            return nil
        case .expire:
            return nil
        case let .deadLetter(letters):
            if failing { return .outboxFailed(.deadLetter(letters), message: "I/O error") }
            let gone = Set(letters.map(\.envelope.sequence))
            outbox.removeAll { gone.contains($0.sequence) }
            deadLetters += letters
            return nil
        case .useMemoryOutbox:
            memory = true
            outbox = []
            return nil
        case .refreshStats:
            return nil
        case let .notify(notice):
            notices.append(notice)
            return nil
        case .finish:
            finished = true
            return nil
        }
    }

    var failing: Bool { memory ? failMemory : failDatabase }

    /// Connects and answers until the machine is live (bounded).
    mutating func connectAndDrain() {
        transportUp = true
        feed(.connected)
        acknowledgeEverything()
    }
}
