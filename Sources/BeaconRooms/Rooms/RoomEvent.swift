import BeaconModel

/// A room decision the leader publishes (kind `room`, docs/schemas/room.schema.json): the beacon's room
/// (`nil` is `not_home`), the room it left, and the decision's number for this beacon, which the next
/// leader continues from the retained state.
public struct RoomEvent: Sendable, Equatable {
    public var beaconID: String
    /// When the decision was made (capture time of the evidence that decided it).
    public var time: Timestamp
    /// The new room; nil: `not_home`.
    public var room: String?
    /// The room announced before (nil: none, or `not_home`).
    public var from: String?
    /// Whether `from` was a room decision at all (false for a beacon's first announcement).
    public var hadRoom: Bool
    /// When the beacon entered `room`.
    public var since: Timestamp
    /// 1, 2, 3, ... per beacon, across leaders.
    public var decision: UInt64
    /// The gateway whose evidence won (nil for `not_home` or a restored decision).
    public var gatewayID: String?
    /// The winning room's lead over the former room, dB.
    public var lead: Double?

    public init(
        beaconID: String, time: Timestamp, room: String?, from: String?, hadRoom: Bool, since: Timestamp,
        decision: UInt64, gatewayID: String? = nil, lead: Double? = nil
    ) {
        self.beaconID = beaconID
        self.time = time
        self.room = room
        self.from = from
        self.hadRoom = hadRoom
        self.since = since
        self.decision = decision
        self.gatewayID = gatewayID
        self.lead = lead
    }

    /// The state value for people and Home Assistant: the room, or `not_home`.
    public static let notHome = "not_home"
    public var roomName: String { room ?? RoomEvent.notHome }
}

/// A room state as announced on the broker (`<prefix>/rooms/<beacon_id>`, retained): what every gateway keeps,
/// so a new leader knows what was announced and continues the decision numbers.
public struct AnnouncedRoom: Sendable, Equatable {
    public var beaconID: String
    public var room: String?
    public var since: Timestamp
    public var time: Timestamp
    public var decision: UInt64
    /// The gateway that announced it.
    public var leader: String

    public init(beaconID: String, room: String?, since: Timestamp, time: Timestamp, decision: UInt64, leader: String) {
        self.beaconID = beaconID
        self.room = room
        self.since = since
        self.time = time
        self.decision = decision
        self.leader = leader
    }

    /// Reads a retained or echoed `room` state payload; nil when it is not one (enter/exit, garbage).
    public init?(payload: [UInt8]) {
        guard payload.count <= 65_536, let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 8),
            json["kind"]?.roomText == "room", json["event"]?.roomText == "room",
            let beacon = json["beacon_id"]?.roomText, !beacon.isEmpty,
            let room = json["room"]?.roomText, let time = json["time"]?.roomNumber, time.isFinite,
            let decision = json["decision"]?.roomInteger, decision > 0,
            let leader = json["gateway"]?.roomText
        else { return nil }
        let since = json["since"]?.roomNumber ?? time
        self.init(
            beaconID: beacon, room: room == RoomEvent.notHome ? nil : room, since: since.isFinite ? since : time,
            time: time, decision: UInt64(decision), leader: leader)
    }

    /// As a row the arbiter restores.
    public var persisted: PersistedRoomState {
        PersistedRoomState(beaconID: beaconID, room: room, since: since, updated: time)
    }
}
