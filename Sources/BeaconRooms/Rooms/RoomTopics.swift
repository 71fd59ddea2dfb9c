import BeaconModel

/// The topics of the in-gateway room arbiter (docs/rooms.md, docs/mqtt.md), under the site's `topics.prefix`:
/// - subscribed: `<prefix>/+/availability` (leader election), `<prefix>/+/sighting/#` (evidence),
///   `<prefix>/rooms/+` (the retained room states: what has been announced, restored by a new leader);
/// - published by the leader: `<prefix>/rooms/<beacon_id>` (retained `room` state) and
///   `<prefix>/rooms/<beacon_id>/<room>` (retained `enter` / `exit` of one room).
///
/// In a zone (`rooms.zones`, docs/rooms.md "Large sites") the availability and sightings are subscribed per
/// gateway of the zone (`<prefix>/<gateway>/availability`, `<prefix>/<gateway>/sighting/#`), so the broker
/// sends a gateway nothing of the other zones, and everything under `rooms` moves to the zone's namespace
/// `<prefix>/zones/<zone>/rooms/...`, which a broker ACL (or a cluster's topic routing) can give each zone.
public struct RoomTopics: Sendable, Equatable {
    /// The topic level under the prefix (or the zone's namespace) that holds the room events (a gateway id may
    /// not be this).
    public static let level = "rooms"
    /// The topic level under the prefix that holds the zones' namespaces (a gateway id may not be this when the
    /// site has zones).
    public static let zonesLevel = "zones"

    public var prefix: String
    /// The zone (nil: a site without zones).
    public var zone: String?
    /// The zone's gateways (empty without a zone: every gateway under the prefix, by wildcard).
    public var zoneGateways: [String]

    public init(prefix: String, zone: String? = nil, gateways: [String] = []) {
        self.prefix = prefix
        self.zone = zone
        self.zoneGateways = zone == nil ? [] : gateways.sorted()
    }

    /// Where the room events live: `<prefix>/rooms`, or `<prefix>/zones/<zone>/rooms`.
    public var base: String {
        guard let zone else { return prefix + "/" + RoomTopics.level }
        return prefix + "/" + RoomTopics.zonesLevel + "/" + TopicLevel.safe(zone) + "/" + RoomTopics.level
    }

    public var availabilityFilter: String { prefix + "/+/availability" }
    public var sightingFilter: String { prefix + "/+/sighting/#" }
    public var stateFilter: String { base + "/+" }

    /// The availability filters the arbiter subscribes: every gateway's, or each of the zone's.
    public var availabilityFilters: [String] {
        zone == nil ? [availabilityFilter] : zoneGateways.map { prefix + "/" + TopicLevel.safe($0) + "/availability" }
    }
    /// The sighting filters the arbiter subscribes: every gateway's, or each of the zone's.
    public var sightingFilters: [String] {
        zone == nil ? [sightingFilter] : zoneGateways.map { prefix + "/" + TopicLevel.safe($0) + "/sighting/#" }
    }

    /// The leader's retained calibration (self-calibration: every gateway's offsets).
    public var calibration: String { base + "/" + RoomTopics.calibrationLevel }
    /// The topic level of the calibration under `rooms` (never a beacon's: a beacon id has a format prefix).
    public static let calibrationLevel = "calibration"

    /// A room's retained training fingerprint (`FingerprintBook.payload`), and the filter for all of them.
    public func fingerprint(room: String) -> String {
        base + "/" + RoomTopics.fingerprintLevel + "/" + TopicLevel.safe(room)
    }
    public var fingerprintFilter: String {
        base + "/" + RoomTopics.fingerprintLevel + "/+"
    }
    /// The topic level of the fingerprints under `rooms` (never a beacon's: a beacon id has a format prefix).
    public static let fingerprintLevel = "fingerprint"

    public func state(beaconID: String) -> String {
        base + "/" + TopicLevel.safe(beaconID)
    }
    public func room(_ room: String, beaconID: String) -> String {
        state(beaconID: beaconID) + "/" + TopicLevel.safe(room)
    }

    /// What an inbound topic is: the levels after the prefix.
    public enum Parsed: Sendable, Equatable {
        case availability(gateway: String)
        case sighting(gateway: String)
        case state(beaconLevel: String)
        case calibration
        case fingerprint(roomLevel: String)
    }

    public func parse(_ topic: String) -> Parsed? {
        if topic.hasPrefix(base + "/") {
            let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(
                String.init)
            switch levels.count {
            case 1 where levels[0] == RoomTopics.calibrationLevel: return .calibration
            case 1: return .state(beaconLevel: levels[0])
            case 2 where levels[0] == RoomTopics.fingerprintLevel: return .fingerprint(roomLevel: levels[1])
            default: return nil
            }
        }
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(
            String.init)
        switch levels.count {
        case 2 where levels[1] == "availability" && levels[0] != RoomTopics.level:
            return .availability(gateway: levels[0])
        case 3 where levels[1] == "sighting" && levels[0] != RoomTopics.level: return .sighting(gateway: levels[0])
        default: return nil
        }
    }
}
