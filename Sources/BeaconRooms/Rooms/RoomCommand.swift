import BeaconModel

/// A rooms command received over MQTT (issue 29; docs/rooms.md, "Training, step by step"; docs/mqtt.md):
/// `<prefix>/<gateway>/command/rooms/train` with `{"id", "room", "device", "seconds"}` and
/// `<prefix>/<gateway>/command/rooms/forget` with `{"id", "room"}`, one topic per verb so a broker ACL can allow
/// a client one of them only; answered on `<prefix>/<gateway>/reply/rooms/<verb>`. Every field is checked; a
/// bad one is a `Failure` naming it, never a trap.
public enum RoomCommand: Sendable, Equatable {
    case train(id: String?, room: String, device: String, seconds: Double)
    case forget(id: String?, room: String)

    /// Why a command was refused (`unknown_room` beside the kinds every command shares).
    public typealias Failure = CommandFailure

    public static let verbs = ["train", "forget"]
    /// The reply topic level of a command whose verb is not one of `verbs`.
    public static let invalidVerb = "invalid"
    public static let maxPayload = 4096
    public static let defaultSeconds = 60.0
    public static let secondsRange: ClosedRange<Double> = 1...600

    public var id: String? {
        switch self {
        case let .train(id, _, _, _), let .forget(id, _): id
        }
    }

    /// The verb of a command topic under `commandBase` (`<prefix>/<gateway>/command/rooms`), nil for any other
    /// topic.
    public static func verb(inTopic topic: String, commandBase: String) -> String? {
        CommandEnvelope.verb(inTopic: topic, commandBase: commandBase)
    }

    /// Reads a command. `rooms`: the site's rooms (the values of `rooms.gateways`), the only rooms accepted.
    public static func parse(verb: String, payload: [UInt8], rooms: Set<String>) -> Result<RoomCommand, Failure> {
        func bad(_ id: String?, _ field: String, _ message: String) -> Result<RoomCommand, Failure> {
            .failure(Failure(id: id, kind: "bad_request", step: field, message: message))
        }
        let envelope: CommandEnvelope
        switch CommandEnvelope.read(
            verb: verb, payload: payload, verbs: verbs, group: "rooms", maxPayload: maxPayload,
            allowed: verb == "train" ? ["id", "room", "device", "seconds"] : ["id", "room"])
        {
        case let .success(read): envelope = read
        case let .failure(failure): return .failure(failure)
        }
        let (id, json) = (envelope.id, envelope.json)
        guard let room = json["room"]?.roomText, !room.isEmpty else {
            return bad(id, "room", "`room` (a room of rooms.gateways) is required as a string")
        }
        guard rooms.contains(room) else {
            let known = rooms.sorted().joined(separator: ", ")
            return .failure(
                Failure(
                    id: id, kind: "unknown_room", step: "room",
                    message: "`\(String(room.prefix(64)))` is not a room of rooms.gateways (\(known))"))
        }
        guard verb == "train" else { return .success(.forget(id: id, room: room)) }
        guard let device = json["device"]?.roomText, CommandEnvelope.isPrintable(device, max: 256) else {
            return bad(id, "device", "`device` (a beacon id, 1-256 printable characters) is required as a string")
        }
        var seconds = defaultSeconds
        if let value = json["seconds"] {
            guard let number = value.roomNumber, number.isFinite, secondsRange.contains(number) else {
                return bad(id, "seconds", "`seconds` must be a number of 1...600")
            }
            seconds = number
        }
        return .success(.train(id: id, room: room, device: device, seconds: seconds))
    }

    // MARK: Replies (JSON, keys in this order; docs/mqtt.md)

    public static func failure(_ failure: Failure, verb: String) -> String {
        JSONValue.object([
            ("id", failure.id.map { .string($0) } ?? .null), ("ok", .bool(false)), ("op", .string(verb)),
            (
                "error",
                .object([
                    ("kind", .string(failure.kind)), ("step", .string(failure.step)),
                    ("message", .string(failure.message)),
                ])
            ),
        ]).serialized
    }

    /// The reply when a training starts: the capture time it ends at.
    public static func trainingStarted(_ recorder: FingerprintRecorder, id: String?, gateway: String) -> String {
        JSONValue.object([
            ("id", id.map { .string($0) } ?? .null), ("ok", .bool(true)), ("op", .string("train")),
            ("state", .string("started")), ("gateway", .string(gateway)), ("room", .string(recorder.room)),
            ("device", .string(recorder.deviceID)), ("seconds", .double(recorder.duration)),
            ("start", .double(recorder.start)), ("end", .double(recorder.end)),
        ]).serialized
    }

    /// The reply when a training ends with a walk: what the walk heard, and the room's pooled fingerprint.
    public static func trainingDone(
        _ recorder: FingerprintRecorder, pooled: RoomFingerprint, id: String?, gateway: String
    ) -> String {
        JSONValue.object([
            ("id", id.map { .string($0) } ?? .null), ("ok", .bool(true)), ("op", .string("train")),
            ("state", .string("done")), ("gateway", .string(gateway)), ("room", .string(recorder.room)),
            ("device", .string(recorder.deviceID)), ("seconds", .double(recorder.duration)),
            ("reports", .int(Int64(recorder.reports))), ("gateways_heard", .int(Int64(recorder.gatewaysHeard))),
            ("walks", .int(Int64(pooled.walks))), ("room_seconds", .double((pooled.seconds * 100).rounded() / 100)),
            ("quality", .double((pooled.quality * 1000).rounded() / 1000)),
        ]).serialized
    }

    public static func forgotten(room: String, had: Bool, id: String?, gateway: String) -> String {
        JSONValue.object([
            ("id", id.map { .string($0) } ?? .null), ("ok", .bool(true)), ("op", .string("forget")),
            ("gateway", .string(gateway)), ("room", .string(room)), ("forgotten", .bool(had)),
        ]).serialized
    }
}
