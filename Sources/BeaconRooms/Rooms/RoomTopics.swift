import BeaconModel

/// The topics of the in-gateway room arbiter (docs/rooms.md, docs/mqtt.md), under the site's `topics.prefix`:
/// - subscribed: `<prefix>/+/availability` (leader election), `<prefix>/+/sighting/#` (evidence),
///   `<prefix>/rooms/+` (the retained room states: what has been announced, restored by a new leader);
/// - published by the leader: `<prefix>/rooms/<beacon_id>` (retained `room` state) and
///   `<prefix>/rooms/<beacon_id>/<room>` (retained `enter` / `exit` of one room).
public struct RoomTopics: Sendable, Equatable {
    /// The topic level under the prefix that holds the room events (a gateway id may not be this).
    public static let level = "rooms"

    public var prefix: String

    public init(prefix: String) { self.prefix = prefix }

    public var availabilityFilter: String { prefix + "/+/availability" }
    public var sightingFilter: String { prefix + "/+/sighting/#" }
    public var stateFilter: String { prefix + "/" + RoomTopics.level + "/+" }

    /// The leader's retained calibration (self-calibration: every gateway's offsets).
    public var calibration: String { prefix + "/" + RoomTopics.level + "/" + RoomTopics.calibrationLevel }
    /// The topic level of the calibration under `rooms` (never a beacon's: a beacon id has a format prefix).
    public static let calibrationLevel = "calibration"

    /// A room's retained training fingerprint (`FingerprintBook.payload`), and the filter for all of them.
    public func fingerprint(room: String) -> String {
        prefix + "/" + RoomTopics.level + "/" + RoomTopics.fingerprintLevel + "/" + TopicLevel.safe(room)
    }
    public var fingerprintFilter: String {
        prefix + "/" + RoomTopics.level + "/" + RoomTopics.fingerprintLevel + "/+"
    }
    /// The topic level of the fingerprints under `rooms` (never a beacon's: a beacon id has a format prefix).
    public static let fingerprintLevel = "fingerprint"

    public func state(beaconID: String) -> String {
        prefix + "/" + RoomTopics.level + "/" + TopicLevel.safe(beaconID)
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
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(
            String.init)
        switch levels.count {
        case 2 where levels[0] == RoomTopics.level && levels[1] == RoomTopics.calibrationLevel: return .calibration
        case 2 where levels[0] == RoomTopics.level: return .state(beaconLevel: levels[1])
        case 3 where levels[0] == RoomTopics.level && levels[1] == RoomTopics.fingerprintLevel:
            return .fingerprint(roomLevel: levels[2])
        case 2 where levels[1] == "availability": return .availability(gateway: levels[0])
        case 3 where levels[1] == "sighting" && levels[0] != RoomTopics.level: return .sighting(gateway: levels[0])
        default: return nil
        }
    }
}
