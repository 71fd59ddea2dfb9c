/// The kinds of event the gateway publishes. Each has its own JSON Schema (docs/schemas/<kind>.schema.json,
/// ESPresense excepted: its payload is ESPresense's own format) and its own configurable QoS and retain flag.
public enum EventKind: String, Sendable, Hashable, CaseIterable {
    /// A beacon was heard (rate-limited by the tracker): RSSI, distance, fields.
    case sighting
    /// A beacon became seen or away.
    case presence
    /// A beacon entered or left a region, or a region state snapshot.
    case region
    /// Gateway status and counters.
    case telemetry
    /// A sighting rendered in ESPresense's format for ESPresense-companion and Home Assistant's `mqtt_room`.
    case espresense
    /// A room decision of the site's room arbiter (`room` state, `enter` / `exit` of a room; docs/rooms.md).
    case room

    /// Whether an undelivered event of this kind goes stale: stale RSSI must not be replayed as live, so the
    /// outbox expires these after `outbox.sighting_max_age_s` and drops them first when it is full.
    public var expires: Bool {
        switch self {
        case .sighting, .telemetry, .espresense: true
        case .presence, .region, .room: false
        }
    }
}
