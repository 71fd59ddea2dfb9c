import BeaconSimulation

@testable import BeaconModel
@testable import BeaconTracking

/// Hand-built observations for engine unit tests. Distance model: `SimulationDistance` (n = 2.7, -59 dBm at 1 m).
enum EngineFixtures {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let t0: Timestamp = 1_700_000_000
    static let distance = SimulationDistance()

    static func id(_ minor: Int) -> String { "ibeacon:\(uuid):1:\(minor)" }

    static func report(
        _ minor: Int, at seconds: Double, rssi: Int?, name: String? = nil,
        fields: [String: FieldValue] = [:]
    ) -> Observation {
        Observation(
            timestamp: t0 + seconds, beaconID: id(minor), format: "ibeacon", identifiers: [uuid, "1", String(minor)],
            address: BluetoothAddress(rawValue: 0xAA_0000_0000 | UInt64(minor)), rssi: rssi, measuredPower: -59,
            name: name, fields: fields)
    }

    static let hall = RegionRule(name: "hall", match: .iBeacon(uuid: uuid), enter: .rssi(-70))

    static func engine(
        regions: [RegionRule] = [hall], settings: TrackerSettings = .default,
        restoring: [PersistedRegionState] = [], now: Double = 0
    ) -> RegionEngine {
        RegionEngine(settings: settings, regions: regions, distance: distance, restoring: restoring, now: t0 + now)
    }

    /// Feeds reports every `step` seconds from `from` to `to` (exclusive) at a constant RSSI; returns all events.
    static func feed(
        _ engine: inout RegionEngine, minor: Int = 1, from: Double, to: Double, step: Double = 0.1,
        rssi: Int?
    ) -> [EngineEvent] {
        var events: [EngineEvent] = []
        var t = from
        while t < to {
            events += engine.advance(to: t0 + t)
            events += engine.process(report(minor, at: t, rssi: rssi))
            t += step
        }
        return events
    }

    static func regionEvents(_ events: [EngineEvent]) -> [RegionEvent] {
        events.compactMap { if case let .region(event) = $0 { event } else { nil } }
    }

    static func presenceEvents(_ events: [EngineEvent]) -> [PresenceEvent] {
        events.compactMap { if case let .presence(event) = $0 { event } else { nil } }
    }

    static func sightings(_ events: [EngineEvent]) -> [SightingEvent] {
        events.compactMap { if case let .sighting(event) = $0 { event } else { nil } }
    }
}
