import BeaconModel

/// Turns engine events and gateway telemetry into envelopes: topic, QoS/retain for the kind, a sequence
/// number from the reserved block, and the JSON payload documented in docs/mqtt.md and docs/schemas/.
///
/// Pure: the sequence block is refilled by the caller from durable storage (`needsSequences`), and time only
/// comes from the events themselves.
public struct EventEncoder: Sendable {
    public let layout: TopicLayout
    public var sequences: SequenceBlock
    /// The one buffer every sighting, presence and region payload is written into (kept between events).
    private var writer = JSONWriter()

    public init(layout: TopicLayout, sequences: SequenceBlock = .empty) {
        self.layout = layout
        self.sequences = sequences
    }

    public var gatewayID: String { layout.gatewayID }

    /// Envelopes one event can need at most (the event itself plus its ESPresense rendering, or a presence
    /// `away` plus the sighting that clears RSSI and distance).
    public static let maxEnvelopesPerEvent: UInt64 = 2

    /// True when the block may not cover the next event: reserve more and call `refill(_:)` first.
    public var needsSequences: Bool { sequences.remaining < EventEncoder.maxEnvelopesPerEvent }

    /// How many sequence numbers to reserve before encoding `eventCount` events: 0 when the block covers them,
    /// else at least 1024. (A refill replaces the rest of the old block: a gap, never a reuse.)
    public func sequencesToReserve(forEvents eventCount: Int) -> Int {
        let needed = UInt64(max(0, eventCount)) * EventEncoder.maxEnvelopesPerEvent
        return sequences.remaining >= needed ? 0 : max(1024, Int(needed))
    }

    public mutating func refill(_ block: SequenceBlock) { sequences = block }

    /// Envelopes for one engine event: one per event, plus the ESPresense rendering of a sighting when that
    /// mode is on and a distance is known (`mqtt_room` needs one), plus for a presence `away` a sighting with
    /// `rssi`, `rssi_smoothed` and `distance` null on the beacon's sighting topic.
    public mutating func encode(_ event: EngineEvent) throws(EventEncoderError) -> [EventEnvelope] {
        switch event {
        case let .sighting(sighting):
            var out = [
                try written(.sighting, time: sighting.time, topic: layout.sighting(beaconID: sighting.beacon.beaconID))
                {
                    EventPayload.writeSighting(sighting, head: $0, to: &$1)
                }
            ]
            let espresense = layout.settings.espresense
            if espresense.enabled, sighting.beacon.distance != nil,
                let topic = layout.espresenseDevice(id: ESPresenseMapping.deviceID(for: sighting.beacon))
            {
                out.append(
                    try envelope(.espresense, time: sighting.time, topic: topic) { _ in
                        ESPresenseMapping.payload(for: sighting.beacon)
                    })
            }
            return out
        case let .presence(presence):
            var out = [
                try written(.presence, time: presence.time, topic: layout.presence(beaconID: presence.beacon.beaconID))
                {
                    EventPayload.writePresence(presence, head: $0, to: &$1)
                }
            ]
            if presence.state == .away {
                // The beacon is gone: a last sighting with RSSI and distance null, so whatever shows the
                // sighting topic's values (Home Assistant's distance and RSSI sensors) stops showing stale ones.
                var gone = presence.beacon
                gone.rssi = nil
                gone.smoothedRSSI = nil
                gone.distance = nil
                out.append(
                    try written(.sighting, time: presence.time, topic: layout.sighting(beaconID: gone.beaconID)) {
                        EventPayload.writeSighting(SightingEvent(time: presence.time, beacon: gone), head: $0, to: &$1)
                    })
            }
            return out
        case let .region(region):
            return [
                try written(.region, time: region.time, topic: layout.region(region.region, beaconID: region.beaconID))
                {
                    EventPayload.writeRegion(region, head: $0, to: &$1)
                }
            ]
        }
    }

    /// Encodes a batch of events, in order.
    public mutating func encode(_ events: [EngineEvent]) throws(EventEncoderError) -> [EventEnvelope] {
        var out: [EventEnvelope] = []
        out.reserveCapacity(events.count)
        for event in events { out += try encode(event) }
        return out
    }

    /// The telemetry event.
    public mutating func encode(_ telemetry: GatewayTelemetry) throws(EventEncoderError) -> EventEnvelope {
        try envelope(.telemetry, time: telemetry.time, topic: layout.telemetry) {
            EventPayload.telemetry(telemetry, head: $0)
        }
    }

    /// An envelope whose payload is written into the reused buffer (no `JSONValue` tree, no `String` appends).
    private mutating func written(
        _ kind: EventKind, time: Timestamp, topic: String,
        payload: (_ head: EventPayload.Head, _ writer: inout JSONWriter) -> Void
    ) throws(EventEncoderError) -> EventEnvelope {
        guard let sequence = sequences.take() else { throw .sequencesExhausted }
        let id = EventEnvelope.eventID(gatewayID: gatewayID, sequence: sequence)
        writer.reset()
        payload(EventPayload.Head(id: id, gatewayID: gatewayID, sequence: sequence, kind: kind, time: time), &writer)
        let policy = layout.settings.policy(for: kind)
        return EventEnvelope(
            id: id, gatewayID: gatewayID, sequence: sequence, captureTime: time, kind: kind,
            topic: topic, qos: policy.qos, retain: policy.retain, payload: writer.text)
    }

    package mutating func envelope(
        _ kind: EventKind, time: Timestamp, topic: String,
        payload: (_ head: [(String, JSONValue)]) -> JSONValue
    ) throws(EventEncoderError) -> EventEnvelope {
        guard let sequence = sequences.take() else { throw .sequencesExhausted }
        let id = EventEnvelope.eventID(gatewayID: gatewayID, sequence: sequence)
        let head: [(String, JSONValue)] = [
            ("schema", .string(EventEnvelope.schemaVersion)), ("id", .string(id)), ("gateway", .string(gatewayID)),
            ("seq", .int(Int64(clamping: sequence))), ("kind", .string(kind.rawValue)), ("time", .double(time)),
        ]
        let policy = layout.settings.policy(for: kind)
        return EventEnvelope(
            id: id, gatewayID: gatewayID, sequence: sequence, captureTime: time, kind: kind,
            topic: topic, qos: policy.qos, retain: policy.retain, payload: payload(head).serialized)
    }
}

public enum EventEncoderError: Error, Equatable, CustomStringConvertible {
    /// The reserved sequence block is used up: reserve a new one (programmer error in the caller's loop).
    case sequencesExhausted

    public var description: String {
        switch self {
        case .sequencesExhausted: "event encoder: sequence block exhausted; reserve sequences before encoding"
        }
    }
}
