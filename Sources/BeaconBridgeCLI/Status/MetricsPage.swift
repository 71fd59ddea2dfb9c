import StatusServer

/// `/metrics`: the status snapshot and the process's own figures in Prometheus' text exposition format 0.0.4,
/// names as Prometheus' naming conventions ask (the `beaconbridge_` prefix, base units, `_total` counters).
/// docs/status-page.md ("Metrics") lists every family.
enum MetricsPage {
    static func render(
        _ s: StatusSnapshot, http: StatusHTTPCounters.Snapshot, cpuSeconds: Double, residentBytes: Int?
    ) -> String {
        var m = PrometheusText()
        m.single(
            "beaconbridge_reports_total", .counter, help: "Advertising reports received from the adapter or capture.",
            Double(s.reports))
        m.single(
            "beaconbridge_hci_events_total", .counter, help: "HCI events read from the adapter or capture.",
            Double(s.hciEvents))
        m.single(
            "beaconbridge_reports_decoded_total", .counter,
            help: "Reports decoded into beacon or device observations handed to the tracker.",
            Double(s.beaconObservations))
        m.family(
            "beaconbridge_reports_dropped_total", .counter,
            help: "HCI events and reports not decoded, by cause (events dropped when the loop fell behind, "
                + "malformed events, private addresses matching no key, replayed encrypted frames).")
        m.sample("beaconbridge_reports_dropped_total", [("cause", "queue_full")], s.sourceDropped)
        m.sample("beaconbridge_reports_dropped_total", [("cause", "malformed")], s.malformedEvents)
        m.sample("beaconbridge_reports_dropped_total", [("cause", "unresolved_private")], s.unresolvedPrivateReports)
        m.sample("beaconbridge_reports_dropped_total", [("cause", "replayed_frame")], s.replayedFrames)
        m.single(
            "beaconbridge_private_reports_resolved_total", .counter,
            help: "Reports from private addresses resolved to a configured device.", Double(s.resolvedReports))
        m.single(
            "beaconbridge_scan_restarts_total", .counter, help: "Scan restarts done by the scanner's supervision.",
            Double(s.scanRestarts))
        m.single("beaconbridge_beacons_tracked", .gauge, help: "Beacons tracked now.", Double(s.trackedBeacons))
        m.single(
            "beaconbridge_beacons_added_total", .counter, help: "Tracker entries made (distinct beacons heard).",
            Double(s.beaconsAdded))
        m.single(
            "beaconbridge_beacons_evicted_total", .counter,
            help: "Beacons dropped from the tracker at tracking.max_beacons.", Double(s.evictions))
        m.family("beaconbridge_events_total", .counter, help: "Events the engine produced and encoded, by kind.")
        m.sample("beaconbridge_events_total", [("kind", "sighting")], s.events.sighting)
        m.sample("beaconbridge_events_total", [("kind", "presence")], s.events.presence)
        m.sample("beaconbridge_events_total", [("kind", "region")], s.events.region)
        m.single(
            "beaconbridge_event_encode_failures_total", .counter, help: "Events that could not be encoded.",
            Double(s.encodeFailures))
        m.single(
            "beaconbridge_published_total", .counter,
            help: "Messages handed to the MQTT client (live and from the outbox).", Double(s.published))
        m.single(
            "beaconbridge_acknowledged_total", .counter,
            help: "Messages acknowledged by the broker (QoS 1/2) or written (QoS 0).", Double(s.acknowledged))
        m.family("beaconbridge_outbox_events", .gauge, help: "Events waiting in the outbox, per sink.")
        m.sample("beaconbridge_outbox_events", [("sink", "mqtt")], s.backlogRows)
        if let webhook = s.webhookBacklog { m.sample("beaconbridge_outbox_events", [("sink", "webhook")], webhook) }
        m.single(
            "beaconbridge_outbox_bytes", .gauge, help: "Bytes of the events waiting in the MQTT outbox.",
            Double(s.backlogBytes))
        m.single(
            "beaconbridge_inflight_messages", .gauge, help: "Messages handed to the broker, not yet acknowledged.",
            Double(s.inflight))
        m.single(
            "beaconbridge_dead_letters", .gauge, help: "Rows in the dead-letter table (refused by the broker).",
            Double(s.deadLetterRows))
        m.single(
            "beaconbridge_dead_lettered_total", .counter, help: "Events moved to the dead-letter table.",
            Double(s.deadLettered))
        m.histogram(
            "beaconbridge_delivery_latency_seconds",
            help: "Seconds from an event's acceptance for delivery to the broker's acknowledgement (live and outbox).",
            buckets: s.latency.cumulative, sum: s.latency.sum, count: s.latency.count)
        m.family("beaconbridge_events_dropped_total", .counter, help: "Events dropped before delivery, by cause.")
        for cause in ["expired", "row_cap", "byte_cap", "connection_lost", "outbox_unavailable"] {
            m.sample("beaconbridge_events_dropped_total", [("cause", cause)], s.droppedByReason[cause] ?? 0)
        }
        for (cause, count) in s.droppedByReason.sorted(by: { $0.key < $1.key })
        where !["expired", "row_cap", "byte_cap", "connection_lost", "outbox_unavailable"].contains(cause) {
            m.sample("beaconbridge_events_dropped_total", [("cause", cause)], count)
        }
        m.single(
            "beaconbridge_broker_connected", .gauge, help: "1 while connected to the MQTT broker, else 0.",
            s.brokerConnected ? 1 : 0)
        m.single(
            "beaconbridge_broker_connects_total", .counter, help: "Connections made to the MQTT broker.",
            Double(s.brokerConnects))
        m.single(
            "beaconbridge_broker_connection_failures_total", .counter, help: "Failed attempts to connect.",
            Double(s.connectionFailures))
        if let leader = s.roomsLeader {
            m.single(
                "beaconbridge_rooms_leader", .gauge,
                help: "1 while this gateway is the rooms site's leader (publishes room decisions), else 0.",
                leader ? 1 : 0)
        }
        if let clients = s.esphomeClients {
            m.single(
                "beaconbridge_esphome_proxy_clients", .gauge, help: "Clients of the ESPHome Bluetooth proxy now.",
                Double(clients))
        }
        m.family("beaconbridge_http_requests_total", .counter, help: "Requests to this server, by outcome.")
        m.sample("beaconbridge_http_requests_total", [("outcome", "answered")], http.requests)
        m.sample("beaconbridge_http_requests_total", [("outcome", "refused")], http.refused)
        m.sample("beaconbridge_http_requests_total", [("outcome", "timed_out")], http.timedOut)
        m.sample("beaconbridge_http_requests_total", [("outcome", "overloaded")], http.overloaded)
        m.single(
            "beaconbridge_http_connections", .gauge, help: "Connections open to this server now (this one included).",
            Double(http.open))
        m.single(
            "beaconbridge_uptime_seconds", .gauge, help: "Seconds since the daemon started.", s.uptime.rounded())
        m.single(
            "process_cpu_seconds_total", .counter, help: "Total user and system CPU time spent in seconds.",
            cpuSeconds)
        if let residentBytes {
            m.single(
                "process_resident_memory_bytes", .gauge, help: "Resident memory size in bytes.",
                Double(residentBytes))
        }
        return m.text
    }
}
