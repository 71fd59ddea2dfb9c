import BeaconCore
import BeaconRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Delivers envelopes to the broker, in sequence order, at least once for QoS 1/2, through the outbox when
/// the broker is unreachable or the in-flight window is full (docs/mqtt.md, docs/outbox.md).
///
/// `publish(_:)` only enqueues; one task at a time owns the delivery state machine (`DeliveryMachine`, through
/// `PublisherDelivery`) and performs every transport and outbox call: `run()`'s, or, while the publisher is
/// driven (`drive(wake:)`), the owner's (the daemon's loop), which then delivers inline (`admit`, `service()`)
/// instead of waking `run()`'s task for every batch. Acknowledgements from the network thread arrive through
/// the same queue (`PublisherInbox`), so a message id is always registered before its acknowledgement is
/// processed, even when libmosquitto fires `on_publish` before `mosquitto_publish` returns.
public final class EventPublisher: Sendable {
    enum Input: Sendable {
        /// Envelopes are waiting in `mailbox`.
        case mailbox
        case snapshot([EventEnvelope])
        case client(MQTTClientEvent)
        case discovery([ControlMessage])
        case subscribe(filter: String, qos: UInt8)
        /// Acknowledged message ids are waiting in `ackInbox`.
        case acknowledgements
        case tick
        case stop
    }
    public struct Configuration: Sendable {
        public var mqtt: MQTTSettings
        public var clientID: String
        public var password: String?
        public var layout: TopicLayout
        public var outbox: OutboxSettings
        /// Wall clock in seconds since the Unix epoch (injected so tests can age sightings): stop deadline,
        /// refusal windows, dead-letter times, and sighting ages unless `ageClock` is set.
        public var now: @Sendable () -> Double
        /// The clock sightings age by in the outbox (`outbox.sighting_max_age_s`), when it is not `now`: a
        /// replay's capture time. Only ageing reads it, so a clock that stands still (a replay's capture has
        /// ended) never holds up the stop.
        public var ageClock: (@Sendable () -> Double)?
        /// The outbox holds the live events too, for another sink (the webhook): MQTT's acknowledgements of live
        /// events are recorded there as well (`DeliverySettings.acknowledgesLiveEvents`).
        public var acknowledgesLiveEvents = false

        public init(
            mqtt: MQTTSettings, clientID: String? = nil, password: String? = nil, layout: TopicLayout,
            outbox: OutboxSettings = OutboxSettings(), now: @escaping @Sendable () -> Double = SystemClock.realtime
        ) {
            self.mqtt = mqtt
            self.clientID = clientID ?? mqtt.clientID ?? "beaconbridge-\(layout.gatewayID)"
            self.password = password
            self.layout = layout
            self.outbox = outbox
            self.now = now
        }
    }

    let configuration: Configuration
    let transport: any DeliveryTransport
    let store: (any EventOutbox)?
    /// Every input, in arrival order, and who handles it (`run()`'s task or a driver).
    let inbox = PublisherInbox()
    /// The delivery adapter, made by whoever holds the inbox first (`prepared()`).
    let cell = DeliveryCell()
    let noticeContinuation: AsyncStream<PublisherNotice>.Continuation
    let sharedCounters = Mutex(PublisherCounters())
    /// Acknowledged message ids handed over by the network thread.
    let ackInbox: AckInbox
    /// Subscribers of inbound messages (`subscribe(_:qos:)`).
    let inbound: InboundRouter
    /// The bounded input of envelopes (`admit`, `publish`).
    let mailbox: PublishMailbox

    /// Envelopes waiting for the delivery loop at most before `admit(_:)` suspends the caller.
    public static let mailboxLimit = 4096
    let finished = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Connection changes and snapshot requests. Buffers the newest 1000 when nobody listens.
    public let notices: AsyncStream<PublisherNotice>

    /// - Parameter outbox: the durable outbox (`GatewayDatabase`), or nil to keep the backlog in memory only
    ///   (e.g. when the database could not be opened).
    /// - Parameter transport: creates the connection (libmosquitto's `MQTTClient` by default; a fake in tests).
    public init(
        configuration: Configuration, outbox: (any EventOutbox)?,
        transport makeTransport: DeliveryTransportFactory = EventPublisher.mosquittoTransport
    ) throws(MQTTError) {
        self.configuration = configuration
        self.store = outbox
        self.mailbox = PublishMailbox(limit: EventPublisher.mailboxLimit)
        (notices, noticeContinuation) = AsyncStream.makeStream(
            of: PublisherNotice.self, bufferingPolicy: .bufferingNewest(1000))
        let continuation = inbox
        let layout = configuration.layout
        let pendingAcks = AckInbox()
        self.ackInbox = pendingAcks
        let router = InboundRouter()
        self.inbound = router
        let statusTopic = layout.settings.homeAssistant.enabled ? layout.homeAssistantStatus : nil
        transport = try makeTransport(
            MQTTClientOptions(
                settings: configuration.mqtt, clientID: configuration.clientID,
                password: configuration.password,
                will: ControlMessage(topic: layout.availability, payload: "offline", qos: 1, retain: true)),
            { event in
                switch event {
                case let .acknowledged(messageID):
                    if pendingAcks.add(messageID, reasonCode: 0) { continuation.put(.acknowledgements) }
                case let .refused(messageID, reasonCode):
                    if pendingAcks.add(messageID, reasonCode: reasonCode) { continuation.put(.acknowledgements) }
                case let .message(topic, payload):
                    router.deliver(InboundMessage(topic: topic, payload: payload))
                    if topic == statusTopic { continuation.put(.client(event)) }
                default:
                    continuation.put(.client(event))
                }
            })
    }

    /// The default transport: libmosquitto.
    public static let mosquittoTransport: DeliveryTransportFactory = { (options, onEvent) throws(MQTTError) in
        try MQTTClient(options: options, onEvent: onEvent)
    }

    /// Subscribes to `filter` (MQTT wildcards `+`, `#`) now and after every reconnect; the stream yields every
    /// message on a matching topic (the newest 1000 when the reader falls behind). Ends when the publisher stops.
    public func subscribe(_ filter: String, qos: UInt8 = 1) -> AsyncStream<InboundMessage> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: InboundMessage.self, bufferingPolicy: .bufferingNewest(1000))
        inbound.add(TopicFilter(filter), continuation)
        inbox.put(.subscribe(filter: filter, qos: min(qos, 2)))
        return stream
    }

    /// Enqueues envelopes for delivery, in order, once fewer than `mailboxLimit` are waiting for the delivery
    /// loop: suspends the caller until then (back-pressure; docs/mqtt.md, "Bounds"). The daemon publishes
    /// through this.
    /// While driven (`drive(wake:)`), the caller is the driver: the envelopes are delivered inline (`service()`)
    /// before it returns, so the mailbox never holds more than one call's envelopes and nothing waits.
    public func admit(_ envelopes: [EventEnvelope]) async {
        guard !envelopes.isEmpty else { return }
        sharedCounters.withLock { $0.submitted += envelopes.count }
        if inbox.isDriven {
            deliver(mailbox.put(envelopes), count: envelopes.count, wake: false)
            await service()
            return
        }
        deliver(await mailbox.admit(envelopes), count: envelopes.count)
    }

    /// Enqueues envelopes for delivery, in order. Never blocks (and so does not bound memory: producers that
    /// can outpace the broker use `admit(_:)`).
    public func publish(_ envelopes: [EventEnvelope]) {
        guard !envelopes.isEmpty else { return }
        sharedCounters.withLock { $0.submitted += envelopes.count }
        deliver(mailbox.put(envelopes), count: envelopes.count)
    }

    private func deliver(_ result: PublishMailbox.PutResult, count: Int, wake: Bool = true) {
        switch result {
        case .announce: inbox.put(.mailbox, wake: wake)
        case .queued: break
        case .closed:
            // After `run()` has stored everything and returned: nothing can take them any more.
            sharedCounters.withLock { $0.dropped["publisher_stopped", default: 0] += count }
        }
    }

    /// Enqueues a retained state snapshot (region state, presence): never stored in the outbox, coalesced with
    /// a snapshot not sent yet, superseded by later events on the same topics, sent once the backlog is drained
    /// (docs/mqtt.md, "Snapshots").
    public func publishSnapshot(_ envelopes: [EventEnvelope]) {
        guard !envelopes.isEmpty else { return }
        sharedCounters.withLock {
            $0.submitted += envelopes.count
            $0.snapshotSubmitted += envelopes.count
        }
        inbox.put(.snapshot(envelopes))
    }

    /// Sets the Home Assistant discovery configs, published now (if connected), on every connect and when
    /// Home Assistant announces `online`.
    public func setDiscovery(_ messages: [ControlMessage]) {
        inbox.put(.discovery(messages))
    }

    /// A snapshot of the counters.
    public var counters: PublisherCounters { sharedCounters.withLock { $0 } }

    /// Connects and delivers until `stop()`. On stop: waits up to 2 s for acknowledgements, writes events
    /// still unacknowledged (and any published after the stop request) to the outbox, publishes `offline`,
    /// disconnects. Call it once; `stop()` waits for it to return. While the publisher is driven, this task
    /// only connects and then waits (the driver handles the inputs) until `release()` or `stop()`.
    public func run() async {
        await inbox.hold()
        let delivery = await prepared()
        inbox.unhold()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [inbox] in
                // Ticks are the driver's while driven (`service(tick:)`).
                await inbox.selfRunning()
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    inbox.put(.tick)
                }
            }
            while let input = await inbox.next() {
                let outcome = await delivery.handle(input)
                inbox.unhold()
                if outcome == .finished { break }
            }
            group.cancelAll()
        }
        await transport.stop()
        // Envelopes published after `stop()` was requested are still in the mailbox: store them.
        inbox.finish()
        await delivery.run(.publish(mailbox.close()))
        await delivery.discardMemoryBacklog()
        delivery.publishCounters()
        inbound.finish()
        noticeContinuation.finish()
        let waiters = finished.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The delivery adapter, made and connected on first use (by the holder of the inbox): the backlog figure
    /// is true from the start (a backlog of an earlier run), not 0 until the first look.
    private func prepared() async -> PublisherDelivery {
        if let delivery = cell.delivery { return delivery }
        let delivery = PublisherDelivery(publisher: self)
        cell.delivery = delivery
        await delivery.refreshBacklog()
        transport.start()
        return delivery
    }

    /// Hands the inputs to the caller's task (the daemon's loop): from now on the caller delivers, with
    /// `admit(_:)` (inline) and `service()`, and `wake` is called (from any thread, at most once until the next
    /// `service()`) when an input is waiting that should not wait for the caller's next turn: a connection
    /// change, a snapshot, a subscription, acknowledgements while draining. `run()` must still be running (it
    /// connects, and takes over again after `release()` or `stop()`). The caller must call `service(tick: true)`
    /// about once a second (outbox checks, stop deadline, backlog figures).
    public func drive(wake: @escaping @Sendable () -> Void) {
        inbox.drive(wake: wake)
    }

    /// Handles the inputs waiting now on the caller's task (driven mode; `drive(wake:)`), then, with `tick`, one
    /// tick. Inputs that arrive meanwhile wait for the next call (announced through `wake` if they should not
    /// wait long), so a long drain of the outbox is interleaved with the caller's other work instead of
    /// holding it up. Returns at once when another task is handling inputs (it takes these too).
    public func service(tick: Bool = false) async {
        guard inbox.tryHold() else { return }
        let delivery = await prepared()
        if tick { inbox.put(.tick, wake: false) }
        for input in inbox.takeHeld() ?? [] { _ = await delivery.handle(input) }
        inbox.acknowledgementsUrgent.store(delivery.acknowledgementsUrgent, ordering: .relaxed)
        inbox.unhold()
    }

    /// Back to `run()`'s own task (ends `drive(wake:)`), e.g. before waiting for delivery at the end.
    public func release() {
        inbox.acknowledgementsUrgent.store(true, ordering: .relaxed)
        inbox.release()
    }

    /// Asks `run()` to finish and waits until it has.
    public func stop() async {
        release()
        inbox.put(.stop)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state -> Bool in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    /// The delivery adapter (`PublisherDelivery`, not Sendable): used only by the task that holds the inbox
    /// (`PublisherInbox.hold`/`tryHold` ... `unhold`), which serialises every access.
    final class DeliveryCell: @unchecked Sendable {
        var delivery: PublisherDelivery?
    }

    /// Acknowledgements from the network thread: message id and MQTT 5 reason code (0 = accepted; 0x80 and
    /// above = refused). One `.acknowledgements` input announces a list that was empty, so a burst of
    /// acknowledgements costs one queue element.
    final class AckInbox: Sendable {
        struct Entry: Sendable {
            var messageID: Int32
            var reasonCode: Int32
        }
        private let entries = Mutex<[Entry]>([])
        /// Adds an acknowledgement; true when the list was empty (the caller then announces it).
        func add(_ id: Int32, reasonCode: Int32) -> Bool {
            entries.withLock { entries in
                entries.append(Entry(messageID: id, reasonCode: reasonCode))
                return entries.count == 1
            }
        }
        /// Moves the acknowledgements into `buffer` (emptied first) and gives the list `buffer`'s storage, so
        /// once both have grown neither side allocates (emptying the list with its capacity kept while the
        /// caller held its old storage allocated a new buffer every time).
        func takeAll(into buffer: inout [Entry]) {
            buffer.removeAll(keepingCapacity: true)
            entries.withLock { swap(&$0, &buffer) }
        }
    }

    func notify(_ notice: PublisherNotice) { noticeContinuation.yield(notice) }
}
