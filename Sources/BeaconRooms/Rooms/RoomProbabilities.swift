import BeaconModel

/// What the leader publishes of the fingerprint classifier's belief about one beacon (issue 29: "the
/// probabilities published, with Home Assistant discovery"; docs/mqtt.md, "Room probabilities"): every room's
/// probability, the decided room and the beacon's learned offset against the training device, retained at QoS 0
/// on `<prefix>/rooms/<beacon_id>/probabilities` (a snapshot: the next one supersedes it, never stored).
public struct RoomProbabilities: Sendable, Equatable {
    public var beaconID: String
    public var time: Timestamp
    /// The decided room (`not_home`, `unknown` or a room), nil before the first decision.
    public var room: String?
    public var probabilities: [String: Double]
    public var deviceOffset: Double?

    /// The topic level under the beacon's room state (a room may not be named so: `check-config`).
    public static let level = "probabilities"
    /// A beacon's probabilities are published again at most this often (s of capture time)...
    public static let interval: Double = 5
    /// ...and only when a room's probability moved by this much, or the decided or most likely room changed.
    public static let change = 0.05

    public init(
        beaconID: String, time: Timestamp, room: String?, probabilities: [String: Double], deviceOffset: Double?
    ) {
        self.beaconID = beaconID
        self.time = time
        self.room = room
        self.probabilities = probabilities
        self.deviceOffset = deviceOffset
    }

    /// The most likely room (ties: the first by name).
    public var mostLikely: String? { probabilities.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key }

    /// Whether this snapshot says something the last published one did not.
    public func differs(from last: RoomProbabilities) -> Bool {
        if room != last.room || mostLikely != last.mostLikely || Set(probabilities.keys) != Set(last.probabilities.keys)
        {
            return true
        }
        return probabilities.contains { abs($0.value - (last.probabilities[$0.key] ?? 0)) >= Self.change }
    }

    /// The JSON payload (keys in this order; probabilities to three decimals, rooms sorted).
    public var payload: String {
        let rooms: [(String, JSONValue)] = probabilities.keys.sorted().map {
            ($0, .double(((probabilities[$0] ?? 0) * 1000).rounded() / 1000))
        }
        return JSONValue.object([
            ("kind", .string("room_probabilities")),
            ("beacon_id", .string(beaconID)),
            ("time", .double(time)),
            ("room", room.map(JSONValue.string) ?? .null),
            ("probabilities", .object(rooms)),
            ("device_offset_db", deviceOffset.map { .double(($0 * 100).rounded() / 100) } ?? .null),
        ]).serialized
    }
}

extension RoomTopics {
    /// The leader's retained room probabilities of a beacon.
    public func probabilities(beaconID: String) -> String {
        state(beaconID: beaconID) + "/" + RoomProbabilities.level
    }
}
