import BeaconModel

/// The JSON payloads of the versioned event schema (docs/mqtt.md, docs/schemas/<kind>.schema.json).
/// Keys are snake_case and appear in the documented order; absent values are `null`, never omitted.
public enum EventPayload {
    /// `sighting`: the common head, then the beacon block.
    public static func sighting(_ event: SightingEvent, head: [(String, JSONValue)]) -> JSONValue {
        .object(head + beaconMembers(event.beacon))
    }

    /// `presence`: the common head, `state` (`seen` / `away`), then the beacon block.
    public static func presence(_ event: PresenceEvent, head: [(String, JSONValue)]) -> JSONValue {
        .object(head + [("state", .string(event.state.rawValue))] + beaconMembers(event.beacon))
    }

    /// `region`: the common head, `event` (`enter` / `exit` / `state`), `region`, `beacon_id`, `state`
    /// (`inside` / `outside` / `unknown`), `since`, and `beacon` (the beacon block or null).
    public static func region(_ event: RegionEvent, head: [(String, JSONValue)]) -> JSONValue {
        .object(
            head + [
                ("event", .string(event.kind.rawValue)),
                ("region", .string(event.region)),
                ("beacon_id", .string(event.beaconID)),
                ("state", .string(event.state.rawValue)),
                ("since", event.since.map { .double($0) } ?? .null),
                ("beacon", event.beacon.map { .object(beaconMembers($0)) } ?? .null),
            ])
    }

    /// `telemetry`: the common head, `status`, `uptime_s`, `counters`.
    public static func telemetry(_ telemetry: GatewayTelemetry, head: [(String, JSONValue)]) -> JSONValue {
        .object(
            head + [
                ("status", .string(telemetry.status)),
                ("uptime_s", .double(rounded(telemetry.uptime, places: 3))),
                ("counters", .object(telemetry.counters.map { ($0.0, .int($0.1)) })),
            ])
    }

    /// The beacon block shared by sighting, presence and region payloads. Distance is rounded to the
    /// centimetre, smoothed RSSI to 0.1 dB and report rate to 0.01/s.
    public static func beaconMembers(_ beacon: BeaconSnapshot) -> [(String, JSONValue)] {
        [
            ("beacon_id", .string(beacon.beaconID)),
            ("format", .string(beacon.format)),
            ("identifiers", .array(beacon.identifiers.map { .string($0) })),
            ("mac", .string(beacon.address.description)),
            ("name", beacon.name.map { .string($0) } ?? .null),
            ("rssi", beacon.rssi.map { .int(Int64($0)) } ?? .null),
            ("rssi_smoothed", beacon.smoothedRSSI.map { .double(rounded($0, places: 1)) } ?? .null),
            ("distance", beacon.distance.map { .double(rounded($0, places: 2)) } ?? .null),
            ("measured_power", beacon.measuredPower.map { .int(Int64($0)) } ?? .null),
            ("report_rate", .double(rounded(beacon.reportRate, places: 2))),
            ("last_seen", .double(beacon.lastSeen)),
            ("fields", .object(beacon.fields.sorted(by: { $0.key < $1.key }).map { ($0.key, JSONValue($0.value)) })),
        ]
    }

    package static func rounded(_ value: Double, places: Int) -> Double {
        guard value.isFinite else { return value }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}
