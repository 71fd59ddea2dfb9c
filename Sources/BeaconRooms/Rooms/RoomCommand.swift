import BeaconModel

/// A rooms command received over MQTT (issue 29; docs/rooms.md, "Training, step by step"; docs/mqtt.md):
/// `<prefix>/<gateway>/command/rooms/train` with `{"id", "room", "device", "seconds"}` and
/// `<prefix>/<gateway>/command/rooms/forget` with `{"id", "room"}`, one topic per verb so a broker ACL can allow
/// a client one of them only; answered on `<prefix>/<gateway>/reply/rooms/<verb>`. Every field is checked; a
/// bad one is a `Failure` naming it, never a trap.
public enum RoomCommand: Sendable, Equatable {
    case train(id: String?, room: String, device: String, seconds: Double)
    case forget(id: String?, room: String)

    /// Why a command was refused: its `id` when usable, the error kind (`bad_request`, `unknown_room`,
    /// `unknown_operation`, `busy`, ...), the field or step, and a message for people.
    public struct Failure: Error, Sendable, Equatable {
        public var id: String?
        public var kind: String
        public var step: String
        public var message: String

        public init(id: String?, kind: String, step: String, message: String) {
            self.id = id
            self.kind = kind
            self.step = step
            self.message = message
        }
    }

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
        guard topic.hasPrefix(commandBase + "/") else { return nil }
        let verb = String(topic.dropFirst(commandBase.count + 1))
        return verb.isEmpty || verb.contains("/") ? nil : verb
    }

    /// Reads a command. `rooms`: the site's rooms (the values of `rooms.gateways`), the only rooms accepted.
    public static func parse(verb: String, payload: [UInt8], rooms: Set<String>) -> Result<RoomCommand, Failure> {
        func bad(_ id: String?, _ field: String, _ message: String) -> Result<RoomCommand, Failure> {
            .failure(Failure(id: id, kind: "bad_request", step: field, message: message))
        }
        guard verbs.contains(verb) else {
            return .failure(
                Failure(
                    id: nil, kind: "unknown_operation", step: "topic",
                    message: "`\(String(verb.prefix(64)))` is not a rooms command (train, forget)"))
        }
        guard payload.count <= maxPayload else {
            return bad(nil, "payload", "the payload is \(payload.count) bytes, at most \(maxPayload)")
        }
        guard let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 4),
            case let .object(members) = json
        else { return bad(nil, "payload", "the payload is not a JSON object") }
        var id: String?
        if let value = json["id"] {
            guard let text = value.roomText, Self.isPrintable(text, max: 128) else {
                return bad(nil, "id", "`id` must be a string of 1-128 printable characters")
            }
            id = text
        }
        let allowed: Set = verb == "train" ? ["id", "room", "device", "seconds"] : ["id", "room"]
        if let unknown = members.first(where: { !allowed.contains($0.0) }) {
            return bad(id, unknown.0, "unknown field `\(String(unknown.0.prefix(64)))`")
        }
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
        guard let device = json["device"]?.roomText, Self.isPrintable(device, max: 256) else {
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

    static func isPrintable(_ text: String, max: Int) -> Bool {
        !text.isEmpty && text.utf8.count <= max && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
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
