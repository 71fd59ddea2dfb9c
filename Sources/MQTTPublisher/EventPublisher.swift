import BeaconDelivery
import BeaconEvents
import BeaconModel
import BeaconRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Delivers envelopes to the broker, in sequence order, at least once for QoS 1/2, through the outbox when
/// the broker is unreachable or the in-flight window is full (docs/mqtt.md, docs/outbox.md).
///
/// This is the Sendable front, for any thread or task: `publish`, `publishSnapshot`, `setDiscovery`, `subscribe`
/// only enqueue (`PublisherInbox`, and the bounded `PublishMailbox` for envelopes), `counters` and `notices`
/// report. One owner performs every transport and outbox call, from start to stop: whoever holds the
/// publisher's `DeliveryDriver` (`makeDriver()`, once): the daemon's loop, which delivers inline; or `run()`,
/// which makes the driver itself for a publisher on its own. Acknowledgements from the network thread arrive
/// through the same inbox, so a message id is always registered before its acknowledgement is processed, even
/// when libmosquitto fires `on_publish` before `mosquitto_publish` returns.
public final class EventPublisher: Sendable {
    enum Input: Sendable {
        /// Envelopes are waiting in `mailbox`.
        case mailbox
        /// Envelopes the owner delivers inline (`DeliveryDriver.admit`; never queued).
        case envelopes([EventEnvelope])
        case snapshot([EventEnvelope])
        case client(TransportEvent)
        case discovery([ControlMessage])
        case reply(ControlMessage, expiresAt: Double)
        case subscribe(filter: String, qos: UInt8)
        /// Acknowledgements are waiting in the inbox's list.
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
    let transport: any MessageTransport
    let store: (any EventOutbox)?
    /// Every input, in arrival order, for the owner (the holder of the driver).
    let inbox = PublisherInbox()
    /// The driver was made (`makeDriver()`: once).
    let driverMade = Atomic<Bool>(false)
    let noticeContinuation: AsyncStream<PublisherNotice>.Continuation
    let sharedCounters = Mutex(PublisherCounters())
    /// Subscribers of inbound messages (`subscribe(_:qos:)`).
    let inbound: InboundRouter
    /// The bounded input of envelopes (`admit`, `publish`).
    let mailbox: PublishMailbox

    /// Envelopes waiting for the owner at most before `admit(_:)` suspends the caller (the daemon's loop
    /// delivers inline, `DeliveryDriver.admit`, and never waits here).
    public static let mailboxLimit = 4096
    let finished = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Connection changes and snapshot requests. Buffers the newest 1000 when nobody listens.
    public let notices: AsyncStream<PublisherNotice>

    /// - Parameter outbox: the durable outbox (`GatewayDatabase`), or nil to keep the backlog in memory only
    ///   (e.g. when the database could not be opened).
    /// - Parameter transport: creates the connection (libmosquitto's `MQTTClient` by default; a fake in tests).
    public init(
        configuration: Configuration, outbox: (any EventOutbox)?,
        transport makeTransport: MessageTransportFactory = EventPublisher.mosquittoTransport
    ) throws(MQTTError) {
        self.configuration = configuration
        self.store = outbox
        self.mailbox = PublishMailbox(limit: EventPublisher.mailboxLimit)
        (notices, noticeContinuation) = AsyncStream.makeStream(
            of: PublisherNotice.self, bufferingPolicy: .bufferingNewest(1000))
        let continuation = inbox
        let layout = configuration.layout
        let router = InboundRouter()
        self.inbound = router
        let statusTopic = layout.settings.homeAssistant.enabled ? layout.homeAssistantStatus : nil
        let now = configuration.now
        transport = try makeTransport(
            MQTTClientOptions(
                settings: configuration.mqtt, clientID: configuration.clientID,
                password: configuration.password,
                will: ControlMessage(topic: layout.availability, payload: "offline", qos: 1, retain: true)),
            { event in
                switch event {
                case let .acknowledged(messageID):
                    continuation.acknowledge(messageID, reasonCode: 0, at: now())
                case let .refused(messageID, reasonCode):
                    continuation.acknowledge(messageID, reasonCode: reasonCode, at: now())
                case let .message(topic, payload):
                    router.deliver(InboundMessage(topic: topic, payload: payload))
                    if topic == statusTopic { continuation.put(.client(event)) }
                default:
                    continuation.put(.client(event))
                }
            })
    }

    /// The default transport: libmosquitto.
    public static let mosquittoTransport: MessageTransportFactory = { (options, onEvent) throws(MQTTError) in
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

    /// Enqueues envelopes for delivery, in order, once fewer than `mailboxLimit` are waiting for the owner:
    /// suspends the caller until then (back-pressure; docs/mqtt.md, "Bounds"). For a producer on another task
    /// than the owner's; the owner itself delivers inline (`DeliveryDriver.admit`).
    public func admit(_ envelopes: [EventEnvelope]) async {
        guard !envelopes.isEmpty else { return }
        sharedCounters.withLock { $0.submitted += envelopes.count }
        deliver(await mailbox.admit(envelopes), count: envelopes.count)
    }

    /// Enqueues envelopes for delivery, in order. Never blocks (and so does not bound memory: producers that
    /// can outpace the broker use `admit(_:)`).
    public func publish(_ envelopes: [EventEnvelope]) {
        guard !envelopes.isEmpty else { return }
        sharedCounters.withLock { $0.submitted += envelopes.count }
        deliver(mailbox.put(envelopes), count: envelopes.count)
    }

    private func deliver(_ result: PublishMailbox.PutResult, count: Int) {
        switch result {
        case .announce: inbox.put(.mailbox)
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

    /// Enqueues the reply to a command (QoS as given, never retained by us, never stored in the outbox): sent at
    /// once when connected, else at the next connect if that comes within `lifetime` seconds; dropped after that
    /// (counted as `reply_expired`).
    public func publishReply(_ message: ControlMessage, lifetime: Double) {
        inbox.put(.reply(message, expiresAt: configuration.now() + lifetime))
    }

    /// Sets the Home Assistant discovery configs, published now (if connected), on every connect and when
    /// Home Assistant announces `online`.
    public func setDiscovery(_ messages: [ControlMessage]) {
        inbox.put(.discovery(messages))
    }

    /// A snapshot of the counters.
    public var counters: PublisherCounters { sharedCounters.withLock { $0 } }

    /// The owner's handle (`DeliveryDriver`): made once, by `run()` or by an owner that delivers on its own task
    /// (the daemon's loop).
    public func makeDriver() -> DeliveryDriver {
        let (exchanged, _) = driverMade.compareExchange(expected: false, desired: true, ordering: .relaxed)
        precondition(exchanged, "EventPublisher.makeDriver(): one driver per publisher")
        return DeliveryDriver(publisher: self)
    }

    /// A publisher on its own: connects and delivers on this task until `stop()` (`makeDriver()` and the driver's
    /// `start`, `deliver(until:)`, `finish`). Call it once; `stop()` waits for it to return.
    public func run() async {
        let driver = makeDriver()
        await driver.start()
        await driver.deliver { driver.ended }
        await driver.finish()
    }

    /// Asks `run()` to finish and waits until it has: waits up to 2 s for acknowledgements, writes events still
    /// unacknowledged (and any published after the stop request) to the outbox, publishes `offline`, disconnects.
    public func stop() async {
        inbox.put(.stop)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state -> Bool in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    /// The driver has finished: the streams end and `stop()` returns.
    func ended() {
        inbound.finish()
        noticeContinuation.finish()
        let waiters = finished.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func notify(_ notice: PublisherNotice) { noticeContinuation.yield(notice) }
}
