import BeaconFormats
import BeaconModel

/// Which sensor fields each announced beacon has actually sent, so Home Assistant gets a discovery config for a
/// reading once it appears (`HomeAssistantDiscovery.sensorMessages`) and never for a field the device does not
/// send.
///
/// Only beacons the configuration names (`beacons`, `devices.known`: `GatewayConfiguration.namedBeacons`) are
/// announced, like their tracker and distance entities: a neighbour's thermometer heard through the wall gets
/// no entity. Only fields that make an entity count (readings, on/off states, events; not information fields),
/// so a new counter or version field does not republish anything. Pure: the caller feeds it the beacons of
/// its events and publishes `messages` when `note` says the set grew.
public struct SensorFieldTracker: Sendable, Equatable {
    /// Entity fields per beacon id, with the format that declared them.
    public private(set) var seen: [String: Entry] = [:]
    /// The beacons to announce: id -> name.
    public private(set) var names: [String: String] = [:]
    /// Upper bound of the fields remembered per beacon (a BTHome frame numbers repeated objects `_1`, `_2`...;
    /// a malicious one cannot grow this without limit).
    public static let maxFieldsPerBeacon = 64

    public struct Entry: Sendable, Equatable {
        public var format: String
        public var fields: Set<String>
    }

    public init(beacons: [KnownBeacon] = []) { setBeacons(beacons) }

    /// Replaces the announced beacons (after a reload); fields of beacons no longer named are forgotten.
    public mutating func setBeacons(_ beacons: [KnownBeacon]) {
        names = Dictionary(beacons.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        seen = seen.filter { names[$0.key] != nil }
    }

    /// Records the fields of `beacon`; true when a named beacon sent an entity field not seen before (the
    /// discovery configs must be published again).
    public mutating func note(_ beacon: BeaconSnapshot) -> Bool {
        guard !beacon.fields.isEmpty, names[beacon.beaconID] != nil,
            let format = FormatRegistry.format(named: beacon.format)
        else { return false }
        var entry = seen[beacon.beaconID] ?? Entry(format: format.name, fields: [])
        if entry.format != format.name { entry = Entry(format: format.name, fields: []) }
        var grew = false
        for name in beacon.fields.keys where !entry.fields.contains(name) {
            guard entry.fields.count < Self.maxFieldsPerBeacon else { break }
            guard let field = format.field(named: name), field.kind != .info else { continue }
            entry.fields.insert(name)
            grew = true
        }
        if grew { seen[beacon.beaconID] = entry }
        return grew
    }

    /// The discovery configs of every field seen so far, beacons in id order.
    public func messages(_ discovery: HomeAssistantDiscovery) -> [ControlMessage] {
        var out: [ControlMessage] = []
        for id in seen.keys.sorted() {
            guard let entry = seen[id], let name = names[id], let format = FormatRegistry.format(named: entry.format)
            else { continue }
            out += discovery.sensorMessages(
                HomeAssistantDiscovery.Beacon(id: id, name: name), format: format,
                fields: Array(entry.fields))
        }
        return out
    }
}
