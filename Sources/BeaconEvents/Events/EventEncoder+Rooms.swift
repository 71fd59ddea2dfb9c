import BeaconModel
import BeaconRooms

extension EventEncoder {
    /// Envelopes a room decision can need at most: the `exit` of the old room, the `enter` of the new one,
    /// the `room` state.
    public static let maxEnvelopesPerRoomEvent: UInt64 = 3

    /// A room decision of the leading gateway (docs/rooms.md, docs/schemas/room.schema.json), in this order:
    /// `exit` of the room left (`<prefix>/rooms/<beacon_id>/<room>`), `enter` of the room entered (same
    /// layout), then the beacon's `room` state (`<prefix>/rooms/<beacon_id>`). All kind `room` (retained, QoS 1
    /// by default), sequenced by this gateway like its other events.
    public mutating func encode(_ event: RoomEvent, topics: RoomTopics) throws(EventEncoderError) -> [EventEnvelope] {
        var out: [EventEnvelope] = []
        if event.hadRoom, let left = event.from, left != event.room {
            out.append(
                try envelope(.room, time: event.time, topic: topics.room(left, beaconID: event.beaconID)) {
                    .object($0 + EventEncoder.roomMembers(event, kind: "exit", room: left))
                })
        }
        if let entered = event.room, entered != event.from || !event.hadRoom {
            out.append(
                try envelope(.room, time: event.time, topic: topics.room(entered, beaconID: event.beaconID)) {
                    .object($0 + EventEncoder.roomMembers(event, kind: "enter", room: entered))
                })
        }
        out.append(
            try envelope(.room, time: event.time, topic: topics.state(beaconID: event.beaconID)) {
                .object($0 + EventEncoder.roomMembers(event, kind: "room", room: event.roomName))
            })
        return out
    }

    /// `event`, `beacon_id`, `room` (the room entered or left; for `room`, the current room or `not_home`),
    /// `from` (the decision's former room, `not_home`, or null for a first announcement), `since`, `decision`,
    /// `winner` (the gateway whose evidence won, or null), `lead_db`.
    static func roomMembers(_ event: RoomEvent, kind: String, room: String) -> [(String, JSONValue)] {
        let from: JSONValue = event.hadRoom ? .string(event.from ?? RoomEvent.notHome) : .null
        return [
            ("event", .string(kind)),
            ("beacon_id", .string(event.beaconID)),
            ("room", .string(room)),
            ("from", from),
            ("since", .double(event.since)),
            ("decision", .int(Int64(clamping: event.decision))),
            ("winner", event.gatewayID.map { .string($0) } ?? .null),
            ("lead_db", event.lead.map { .double(EventPayload.rounded($0, places: 1)) } ?? .null),
        ]
    }
}
