/// Why a command received over MQTT was refused: its `id` when usable, the error kind (`bad_request`,
/// `unknown_operation`, `unknown_room`, `unknown_region`, `busy`, ...), the field or step, and a message for people.
public struct CommandFailure: Error, Sendable, Equatable {
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

/// What the gateway's MQTT commands share (the rooms commands, the regions commands; docs/mqtt.md): one topic per
/// verb under a command base, so a broker ACL can allow a client one verb only, and a payload that is a bounded
/// JSON object with an optional printable `id` and only the verb's fields. Each command reads its own fields from
/// `json` after `read` has checked these.
public struct CommandEnvelope: Sendable {
    public var id: String?
    public var json: JSONValue

    /// The verb of a command topic under `commandBase`, nil for any other topic (or a deeper one).
    public static func verb(inTopic topic: String, commandBase: String) -> String? {
        guard topic.hasPrefix(commandBase + "/") else { return nil }
        let verb = String(topic.dropFirst(commandBase.count + 1))
        return verb.isEmpty || verb.contains("/") ? nil : verb
    }

    /// Checks `verb` (one of `verbs`, named in the refusal as a `group` command), the payload's size, that it is
    /// a JSON object, its `id`, and that it has no field outside `allowed`.
    public static func read(
        verb: String, payload: [UInt8], verbs: [String], group: String, maxPayload: Int, allowed: Set<String>
    ) -> Result<CommandEnvelope, CommandFailure> {
        func bad(_ id: String?, _ field: String, _ message: String) -> Result<CommandEnvelope, CommandFailure> {
            .failure(CommandFailure(id: id, kind: "bad_request", step: field, message: message))
        }
        guard verbs.contains(verb) else {
            return .failure(
                CommandFailure(
                    id: nil, kind: "unknown_operation", step: "topic",
                    message:
                        "`\(String(verb.prefix(64)))` is not a \(group) command (\(verbs.joined(separator: ", ")))"))
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
            guard case let .string(text) = value, isPrintable(text, max: 128) else {
                return bad(nil, "id", "`id` must be a string of 1-128 printable characters")
            }
            id = text
        }
        if let unknown = members.first(where: { !allowed.contains($0.0) }) {
            return bad(id, unknown.0, "unknown field `\(String(unknown.0.prefix(64)))`")
        }
        return .success(CommandEnvelope(id: id, json: json))
    }

    /// 1-`max` bytes of UTF-8 without control characters.
    public static func isPrintable(_ text: String, max: Int) -> Bool {
        !text.isEmpty && text.utf8.count <= max && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
