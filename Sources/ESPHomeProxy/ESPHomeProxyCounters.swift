import Synchronization

/// Counters of the proxy server, readable from any thread (telemetry, the daemon's summary, tests).
public final class ESPHomeProxyCounters: Sendable {
    let connections = Atomic<UInt64>(0)
    let refused = Atomic<UInt64>(0)
    let protocolErrors = Atomic<UInt64>(0)
    let clients = Atomic<Int>(0)
    let advertisementsReceived = Atomic<UInt64>(0)
    let advertisementsSent = Atomic<UInt64>(0)
    let advertisementsDropped = Atomic<UInt64>(0)
    let eventsDropped = Atomic<UInt64>(0)
    let mdnsAnnounced = Atomic<Int>(0)
    let mdnsFailures = Atomic<UInt64>(0)
    let gattConnects = Atomic<UInt64>(0)
    let notificationsDropped = Atomic<UInt64>(0)

    init() {}

    public struct Snapshot: Sendable, Equatable {
        /// Accepted connections in total, and those refused by the allow-list or `max_clients`.
        public var connections: UInt64
        public var refused: UInt64
        /// Connections closed for a malformed, oversized or out-of-order frame or a failed handshake.
        public var protocolErrors: UInt64
        /// Clients connected now.
        public var clients: Int
        /// Advertisements handed to the proxy, sent to clients (one count per client) and dropped for
        /// clients whose queue was full (one count per client and advertisement).
        public var advertisementsReceived: UInt64
        public var advertisementsSent: UInt64
        public var advertisementsDropped: UInt64
        /// HCI events dropped before parsing because the proxy's own hand-over buffer was full.
        public var eventsDropped: UInt64
        /// 1 while avahi-daemon confirms the mDNS announcement of the daemon's `avahi-publish-service` child,
        /// else 0; the times that child ended or failed (each logged with its reason).
        public var mdnsAnnounced: Int = 0
        public var mdnsFailures: UInt64 = 0
        /// Active connections: connects clients asked for, and notifications dropped (a connection's hand-over
        /// queue or the client's queue full). In the daemon's summary, not in telemetry.
        public var gattConnects: UInt64 = 0
        public var notificationsDropped: UInt64 = 0

        /// The counters as telemetry `counters` entries (docs/mqtt.md, "Telemetry counters of the ESPHome proxy").
        public var telemetry: [(String, Int64)] {
            [
                ("esphome_clients", Int64(clients)),
                ("esphome_connections", Int64(clamping: connections)),
                ("esphome_refused", Int64(clamping: refused)),
                ("esphome_closed_bad_frames", Int64(clamping: protocolErrors)),
                ("esphome_advertisements", Int64(clamping: advertisementsReceived)),
                ("esphome_advertisements_sent", Int64(clamping: advertisementsSent)),
                ("esphome_queue_dropped", Int64(clamping: advertisementsDropped)),
                ("esphome_events_dropped", Int64(clamping: eventsDropped)),
                ("esphome_mdns_announced", Int64(mdnsAnnounced)),
                ("esphome_mdns_failures", Int64(clamping: mdnsFailures)),
            ]
        }
    }

    public var snapshot: Snapshot {
        Snapshot(
            connections: connections.load(ordering: .relaxed), refused: refused.load(ordering: .relaxed),
            protocolErrors: protocolErrors.load(ordering: .relaxed), clients: clients.load(ordering: .relaxed),
            advertisementsReceived: advertisementsReceived.load(ordering: .relaxed),
            advertisementsSent: advertisementsSent.load(ordering: .relaxed),
            advertisementsDropped: advertisementsDropped.load(ordering: .relaxed),
            eventsDropped: eventsDropped.load(ordering: .relaxed),
            mdnsAnnounced: mdnsAnnounced.load(ordering: .relaxed),
            mdnsFailures: mdnsFailures.load(ordering: .relaxed), gattConnects: gattConnects.load(ordering: .relaxed),
            notificationsDropped: notificationsDropped.load(ordering: .relaxed))
    }
}
