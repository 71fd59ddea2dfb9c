import BeaconEvents
import BeaconFormats
import BeaconModel
import BeaconRuntime
import BeaconTracking
import ESPHomeProxy
import HCIScanner
import MQTTPublisher

/// The daemon's own counters and the telemetry event built from all counters.
struct DaemonTelemetry {
    let startedAt: Double
    var lastPublished: Double = -.infinity
    var submitted = 0
    var encodeFailures = 0
    /// Engine events by kind (the status page and `/metrics`).
    var events = EventCounts()
    private var lastReports: UInt64 = 0
    private var lastReportTime: Double

    init(startedAt: Double) {
        self.startedAt = startedAt
        self.lastReportTime = startedAt
    }

    /// The telemetry event: reports per second since the last one, drops, backlog, adapter restarts, memory;
    /// with the ESPHome proxy on, its clients, refusals, bad-frame closes and queue drops.
    mutating func report(
        time: Timestamp, pipeline: GatewayPipeline, source: HCISourceStatistics,
        publisher: PublisherCounters, esphome: ESPHomeProxyCounters.Snapshot? = nil,
        rooms: [(String, Int64)] = []
    ) -> GatewayTelemetry {
        let now = SystemClock.monotonic()
        let reports = pipeline.counters.reports
        let rate = now > lastReportTime ? Double(reports - lastReports) / (now - lastReportTime) : 0
        lastReports = reports
        lastReportTime = now
        let tracker = pipeline.engine.counters
        let silences = pipeline.engine.silenceCounts
        var counters: [(String, Int64)] = [
            ("reports_per_second", Int64(rate.rounded())),
            ("hci_events", Int64(pipeline.counters.hciEvents)),
            ("reports", Int64(reports)),
            // Seconds since the newest advertising report, at the telemetry's capture time; −1 before the first.
            (
                "last_report_age_s",
                pipeline.counters.lastReport.isFinite && time.isFinite
                    ? Int64(max(0, min(time - pipeline.counters.lastReport, 1e9)).rounded()) : -1
            ),
            ("malformed_events", Int64(pipeline.counters.malformedEvents)),
            ("beacon_observations", Int64(pipeline.counters.beacons)),
            ("tracked_beacons", Int64(pipeline.engine.trackedCount)),
            ("tracker_evictions", Int64(tracker.evictions)),
            ("beacons_stale", Int64(silences.stale)),
            ("beacons_held", Int64(silences.held)),
            ("private_reports_resolved", Int64(pipeline.counters.resolvedReports)),
            ("private_reports_unresolved", Int64(pipeline.counters.unresolvedPrivateReports)),
            ("private_addresses_cached", Int64(pipeline.resolver.cachedResolved + pipeline.resolver.cachedUnresolved)),
            ("source_dropped", Int64(source.dropped)),
            ("scan_restarts", Int64(source.scanRestarts)),
            ("adapter_power_cycles", Int64(source.adapterPowerCycles)),
            ("adapter_reopens", Int64(source.adapterReopens)),
            ("encode_failures", Int64(encodeFailures)),
            ("rss_bytes", Int64(ProcessStatistics.residentBytes() ?? 0)),
        ]
        counters.append(contentsOf: publisher.telemetry)
        if let esphome { counters.append(contentsOf: esphome.telemetry) }
        counters.append(contentsOf: rooms)
        return GatewayTelemetry(time: time, uptime: now - startedAt, counters: counters)
    }

    /// Log metadata summing up a run: `beacons` counts beacons (tracker entries made: distinct beacons, one
    /// evicted at `max_beacons` and heard again counts again), `beacon_observations` their reports.
    func summary(pipeline: GatewayPipeline, publisher: PublisherCounters) -> Logger.Metadata {
        [
            "hci_events": "\(pipeline.counters.hciEvents)", "beacons": "\(pipeline.engine.counters.beaconsAdded)",
            "beacon_observations": "\(pipeline.counters.beacons)",
            "events": "\(submitted)", "published": "\(publisher.published)",
            "acknowledged": "\(publisher.acknowledged)",
            "outbox_rows": "\(publisher.backlogRows)", "dropped": "\(publisher.droppedTotal)",
            "dead_lettered": "\(publisher.deadLettered)",
            "private_resolved": "\(pipeline.counters.resolvedReports)",
            "private_unresolved": "\(pipeline.counters.unresolvedPrivateReports)",
        ]
    }
}
