import BeaconEvents

/// What the delivery state machine needs to know, resolved from the configuration by the adapter.
public struct DeliverySettings: Sendable, Equatable {
    /// Events in flight (sent, not acknowledged) at most (`mqtt.inflight_window`).
    public var window: Int
    /// Outbox rows read per drain step and acknowledged rows deleted per transaction (`outbox.batch_size`).
    public var batchSize: Int
    /// Expiring kinds older than this are dropped from the outbox before a drain step (`outbox.sighting_max_age_s`).
    public var sightingMaxAge: Double
    /// How long a stop waits for acknowledgements before storing what is still in flight.
    public var stopGrace: Double
    /// Sent on every connect (availability `online`, retained), and on stop (`offline`).
    public var online: [ControlMessage]
    public var offline: [ControlMessage]
    /// Home Assistant's birth topic: subscribed on every connect; `online` there resends discovery and asks
    /// for a snapshot. Nil when Home Assistant discovery is off.
    public var homeAssistantStatus: String?
    /// After a connection dropped right after several events were sent, one event at a time is in flight for
    /// this many acknowledgements (so the next such drop names the event the broker refuses).
    public var probeLength: Int
    /// The outbox also holds the live events (another sink reads them from its own cursor: the webhook), so
    /// acknowledgements of live events are recorded too (`.delete`, which is MQTT's acknowledgement there).
    public var acknowledgesLiveEvents = false

    public init(
        window: Int, batchSize: Int, sightingMaxAge: Double, stopGrace: Double = 2,
        online: [ControlMessage] = [], offline: [ControlMessage] = [], homeAssistantStatus: String? = nil,
        probeLength: Int = 32
    ) {
        self.window = max(1, window)
        self.batchSize = max(1, batchSize)
        self.sightingMaxAge = sightingMaxAge
        self.stopGrace = stopGrace
        self.online = online
        self.offline = offline
        self.homeAssistantStatus = homeAssistantStatus
        self.probeLength = max(1, probeLength)
    }
}
