import BeaconEvents
import BeaconModel
import BeaconRuntime

/// The one owner of a publisher's delivery (docs/architecture.md, "Delivery"), from `start` to `finish`: it feeds
/// the publisher's inputs to the delivery adapter (`PublisherDelivery`, around the `DeliveryMachine`) and performs
/// what it returns, all on the task that holds it. Not Sendable, so the compiler keeps it on that task: the
/// daemon's loop (which delivers inline: `admit`, `service` after every item of its mailbox, `deliver(until:)`
/// while it waits for a connection or for delivery at the end), or `EventPublisher.run()`'s task for a publisher
/// on its own. There is no second task to hand delivery to or back from.
///
/// Made once per publisher (`EventPublisher.makeDriver()`).
public final class DeliveryDriver {
    public let publisher: EventPublisher
    private var delivery: PublisherDelivery?
    private var inputs: [EventPublisher.Input] = []

    init(publisher: EventPublisher) {
        self.publisher = publisher
    }

    /// Makes the adapter (the backlog figure is true from the start: a backlog of an earlier run), starts the
    /// transport (connecting, reconnecting until `finish`). `wake` is called (from any thread, at most once until
    /// the next `service()`) when an input waits that should not wait for the owner's next turn while it waits
    /// elsewhere (a connection change, a snapshot, a subscription, acknowledgements while draining or stopping or
    /// with half the window waiting). The owner calls `service(tick: true)` about once a second while it runs
    /// (outbox checks, the stop deadline, the backlog figures).
    public func start(wake: (@Sendable () -> Void)? = nil) async {
        guard delivery == nil else { return }
        publisher.inbox.setWake(wake)
        let delivery = PublisherDelivery(publisher: publisher)
        self.delivery = delivery
        await delivery.refreshBacklog()
        publisher.transport.start()
    }

    /// Delivers envelopes inline, in order: handed to the machine (and from it to the transport, or the outbox)
    /// after the inputs waiting before them and before this returns, so nothing queues between the owner and
    /// delivery. Before `start` they wait in the publisher's mailbox; after `finish` they are counted as dropped
    /// (`publisher_stopped`).
    public func admit(_ envelopes: [EventEnvelope]) async {
        guard !envelopes.isEmpty else { return }
        guard let delivery else {
            publisher.publish(envelopes)
            return
        }
        publisher.sharedCounters.withLock { $0.submitted += envelopes.count }
        guard !delivery.ended else {
            publisher.sharedCounters.withLock { $0.dropped["publisher_stopped", default: 0] += envelopes.count }
            return
        }
        await service(tick: false, then: envelopes)
    }

    /// Handles the inputs waiting now, then, with `tick`, one tick. Inputs that arrive meanwhile wait for the next
    /// call (announced through `wake` if they should not wait long), so a long drain of the outbox is interleaved
    /// with the owner's other work instead of holding it up.
    public func service(tick: Bool = false) async {
        await service(tick: tick, then: nil)
    }

    private func service(tick: Bool, then envelopes: [EventEnvelope]?) async {
        guard let delivery, !delivery.ended else { return }
        if tick { publisher.inbox.put(.tick, wake: false) }
        publisher.inbox.take(into: &inputs)
        for input in inputs { _ = await delivery.handle(input) }
        inputs.removeAll(keepingCapacity: true)
        if let envelopes { _ = await delivery.handle(.envelopes(envelopes)) }
        publisher.inbox.turnEnded(acknowledgementsUrgent: delivery.acknowledgementsUrgent)
    }

    /// Delivers on the owner's task until `done()` holds (checked after every turn): each input as it arrives, a
    /// tick every 250 ms (so `done` is also checked at least 4 times a second).
    public func deliver(until done: () async -> Bool) async {
        await withTaskGroup(of: Void.self) { group in
            // The ticker touches only the Sendable inbox; delivery stays on this task.
            group.addTask { [inbox = publisher.inbox] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    inbox.put(.tick)
                }
            }
            while !(await done()) {
                await publisher.inbox.wait()
                await service()
            }
            group.cancelAll()
        }
    }

    /// Whether delivery has ended (after `.stop`, or never started).
    public var ended: Bool { delivery?.ended ?? true }

    /// The stop: waits up to 2 s for acknowledgements (delivering meanwhile), writes events still unacknowledged
    /// (and any published after the stop request) to the outbox, publishes `offline`, disconnects; then ends the
    /// publisher's streams (notices, subscriptions). A publisher never started only ends its streams.
    public func finish() async {
        if let delivery {
            if !delivery.ended { publisher.inbox.put(.stop) }
            await deliver { delivery.ended }
            await publisher.transport.stop()
            publisher.inbox.finish()
            // Envelopes published after the stop was requested are still in the mailbox: store them.
            await delivery.run(.publish(publisher.mailbox.close()))
            await delivery.discardMemoryBacklog()
            delivery.publishCounters()
        } else {
            publisher.inbox.finish()
            _ = publisher.mailbox.close()
        }
        publisher.ended()
    }

    // The publisher's other inputs, for an owner that holds only the driver.

    /// The counters (`EventPublisher.counters`).
    public var counters: PublisherCounters { publisher.counters }

    /// `EventPublisher.publishSnapshot(_:)`.
    public func publishSnapshot(_ envelopes: [EventEnvelope]) { publisher.publishSnapshot(envelopes) }

    /// `EventPublisher.publishReply(_:lifetime:)`.
    public func publishReply(_ message: ControlMessage, lifetime: Double) {
        publisher.publishReply(message, lifetime: lifetime)
    }

    /// `EventPublisher.setDiscovery(_:)`.
    public func setDiscovery(_ messages: [ControlMessage]) { publisher.setDiscovery(messages) }

    /// `EventPublisher.subscribe(_:qos:)`.
    public func subscribe(_ filter: String, qos: UInt8 = 1) -> AsyncStream<InboundMessage> {
        publisher.subscribe(filter, qos: qos)
    }
}
