import BeaconEvents
import BeaconFormats
import BeaconModel
import BeaconRuntime
import HCIScanner
import MQTTPublisher
import SQLiteStore

extension Daemon {
    /// Encodes engine events into envelopes (reserving sequence numbers in the database first) and hands
    /// them to the publisher. An event that cannot be encoded is logged and counted, never fatal. A state
    /// `snapshot` is handed over as one (coalesced, never stored in the outbox: docs/mqtt.md, "Snapshots").
    func publish(_ events: [EngineEvent], snapshot: Bool = false) async {
        guard !events.isEmpty else { return }
        announceNewSensorFields(events)
        let needed = UInt64(events.count) * EventEncoder.maxEnvelopesPerEvent
        if encoder.sequences.remaining < needed { await reserveSequences(atLeast: needed) }
        var envelopes: [EventEnvelope] = []
        envelopes.reserveCapacity(events.count)
        for event in events {
            telemetry.events.count(event)
            do {
                envelopes.append(contentsOf: try encoder.encode(event))
            } catch {
                telemetry.encodeFailures += 1
                logger.error("cannot encode event", metadata: ["error": "\(error)"])
            }
        }
        telemetry.submitted += envelopes.count
        if !snapshot { await storeForWebhook(envelopes) }
        if snapshot { publisher.publishSnapshot(envelopes) } else { await publisher.admit(envelopes) }
        if !snapshot { await feedRoomSightings(events) }
    }

    /// Gateway status and counters, every `telemetry.interval` seconds of wall time.
    /// `final`: a replay's last report, after its end (its counters then hold every decision of the capture,
    /// which a fast replay would otherwise end before the next interval came round).
    func publishTelemetryIfDue(final: Bool = false) async {
        guard configuration.telemetry.enabled else { return }
        let now = SystemClock.monotonic()
        guard final || now - telemetry.lastPublished >= configuration.telemetry.interval else { return }
        telemetry.lastPublished = now
        let report = telemetry.report(
            time: clock, pipeline: pipeline, source: source.statistics,
            publisher: publisher.counters, esphome: esphome?.server.counters.snapshot, rooms: roomTelemetry)
        if encoder.sequences.remaining < 1 { await reserveSequences(atLeast: 1) }
        do {
            let envelope = try encoder.encode(report)
            telemetry.submitted += 1
            await storeForWebhook([envelope])
            await publisher.admit([envelope])
        } catch {
            logger.error("cannot encode telemetry", metadata: ["error": "\(error)"])
        }
    }

    /// With a webhook, the events of the kinds it takes are stored in the outbox before MQTT sees them (MQTT
    /// sends live events without storing them): the webhook reads them from its own cursor, and a row leaves the
    /// outbox once both sinks acknowledged it (the MQTT machine's own store of the same row is ignored).
    func storeForWebhook(_ envelopes: [EventEnvelope]) async {
        guard let webhook, let database else { return }
        let wanted = envelopes.filter { webhook.kinds.contains($0.kind) }
        guard !wanted.isEmpty else { return }
        do { try await database.append(wanted) } catch {
            logger.error(
                "cannot store events for the webhook", metadata: ["error": "\(error)", "count": "\(wanted.count)"])
        }
    }

    /// Sequence numbers come in blocks reserved in the database so they keep increasing across restarts.
    /// Without a database, a block starting at the wall clock in microseconds keeps them increasing too (and
    /// above the database's counter as last seen, should it run ahead of the clock).
    func reserveSequences(atLeast count: UInt64) async {
        let size = Int(max(count, 1024))
        var floor: UInt64 = 0
        if let database {
            do {
                encoder.refill(try await database.reserveSequences(size, above: encoder.sequences.end))
                return
            } catch {
                logger.error("cannot reserve sequence numbers in the database", metadata: ["error": "\(error)"])
            }
            floor = await database.sequenceFloor() + 1
        }
        let start = max(encoder.sequences.end, floor, UInt64(SystemClock.realtime() * 1_000_000))
        encoder.refill(SequenceBlock(first: start, end: start + UInt64(size)))
    }

    /// Home Assistant discovery configs for the configured beacons and regions, for the sensor fields the
    /// named beacons have sent so far and, with `site:`, for the site configuration (when enabled). The publisher sends them now, on every connect and on
    /// Home Assistant's birth message.
    func publishDiscovery() {
        guard configuration.topics.homeAssistant.enabled else { return }
        let discovery = HomeAssistantDiscovery(
            layout: encoder.layout, gatewayName: configuration.gateway.name,
            softwareVersion: CommandLineTool.version,
            sensorExpiry: HomeAssistantDiscovery.sensorExpiry(for: configuration.tracking))
        let named = configuration.namedBeacons
        let beacons = named.map { HomeAssistantDiscovery.Beacon(id: $0.id, name: $0.name) }
        sensorFields.setBeacons(named)
        publisher.setDiscovery(
            discovery.messages(beacons: beacons, regions: configuration.regions.map(HomeAssistantDiscovery.Region.init))
                + sensorFields.messages(discovery) + roomDiscovery(discovery, beacons: beacons)
                + gattDiscovery(discovery) + siteDiscovery(discovery))
    }

    /// Publishes the discovery configs again when a named beacon's sightings carry a sensor field (reading,
    /// on/off state, event) it has not sent before.
    private func announceNewSensorFields(_ events: [EngineEvent]) {
        guard configuration.topics.homeAssistant.enabled else { return }
        var grew = false
        for case let .sighting(sighting) in events where sensorFields.note(sighting.beacon) { grew = true }
        if grew { publishDiscovery() }
    }

    static func log(_ notice: PublisherNotice, to logger: Logger) {
        switch notice {
        case .connected:
            logger.notice("connected to the MQTT broker")
        case let .connectionFailed(error, retry):
            logger.error(
                "cannot connect to the MQTT broker", metadata: ["error": "\(error)", "retry_in_s": "\(retry)"])
        case let .disconnected(error, retry):
            logger.warning(
                "MQTT connection lost; buffering to the outbox",
                metadata: ["error": "\(error)", "retry_in_s": "\(retry)"])
        case .snapshotRequested:
            break
        case let .eventsDropped(reason, count):
            logger.warning("events dropped", metadata: ["reason": "\(reason)", "count": "\(count)"])
        case let .deadLettered(count, sequence, topic, reason):
            logger.error(
                "events refused by the broker moved to the dead-letter table (see `beaconbridge outbox`)",
                metadata: ["count": "\(count)", "seq": "\(sequence)", "topic": "\(topic)", "reason": "\(reason)"])
        case let .outboxFailed(message):
            logger.error("outbox database failed; keeping events in memory", metadata: ["error": "\(message)"])
        case let .outboxFileLost(recovery):
            var metadata: Logger.Metadata = [
                "path": "\(recovery.path)", "cause": "\(recovery.cause.rawValue)",
                "rows_copied": "\(recovery.rowsCopied)", "rows_lost": "\(recovery.rowsLost)",
            ]
            if let moved = recovery.movedAside { metadata["moved_to"] = "\(moved)" }
            if let error = recovery.copyError { metadata["copy_error"] = "\(error)" }
            if let error = recovery.openError {
                metadata["error"] = "\(error)"
                logger.critical(
                    "the outbox database file was \(recovery.cause.rawValue) while running and a new one cannot be "
                        + "opened; keeping events in memory, trying again every 2 s", metadata: metadata)
            } else {
                logger.error(
                    "the outbox database file was \(recovery.cause.rawValue) while running; what it held was copied "
                        + "into a new database at the path", metadata: metadata)
            }
        case let .outboxRecovered(rows):
            logger.notice(
                "outbox database takes writes again; events kept in memory written back", metadata: ["rows": "\(rows)"])
        }
    }
}
