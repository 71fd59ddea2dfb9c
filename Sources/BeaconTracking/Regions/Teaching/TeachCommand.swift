import BeaconModel

/// A teach command received over MQTT (issue 43; docs/teach.md, docs/mqtt.md "Regions commands"), one topic per
/// verb so a broker ACL can allow a client one of them only: `<prefix>/regions/command/teach` with
/// `{"id", "region", "device", "at", "seconds"}` and `<prefix>/regions/command/forget` with
/// `{"id", "region", "device"}`. Every gateway of the site reads them; each answers on its own
/// `<prefix>/<gateway>/reply/regions/<verb>`. Every field is checked; a bad one is a `Failure` naming it, never a
/// trap.
public enum TeachCommand: Sendable, Equatable {
    case teach(id: String?, region: String?, device: String, spot: TeachSpot, seconds: Double)
    case forget(id: String?, region: String?, device: String)

    /// Why a command was refused (`unknown_region`, `unknown_device`, `not_heard` beside the kinds every command
    /// shares).
    public typealias Failure = CommandFailure

    public static let verbs = ["teach", "forget"]
    /// The reply topic level of a command whose verb is not one of `verbs`.
    public static let invalidVerb = "invalid"
    public static let maxPayload = 4096
    public static let defaultSeconds = 30.0
    public static let secondsRange: ClosedRange<Double> = 1...120

    public var id: String? {
        switch self {
        case let .teach(id, _, _, _, _), let .forget(id, _, _): id
        }
    }

    /// The site's regions command topics: `<prefix>/regions/command/<verb>`.
    public static func commandBase(prefix: String) -> String { prefix + "/regions/command" }
    /// A gateway's reply topic under its topic base (`<prefix>/<gateway>`): `<base>/reply/regions/<verb>`.
    public static func replyTopic(gatewayBase: String, verb: String) -> String {
        gatewayBase + "/reply/regions/" + TopicLevel.safe(verb)
    }

    /// The verb of a command topic under `commandBase` (`<prefix>/regions/command`), nil for any other topic.
    public static func verb(inTopic topic: String, commandBase: String) -> String? {
        CommandEnvelope.verb(inTopic: topic, commandBase: commandBase)
    }

    /// Reads a command. `regions`: the configured regions' names, the only regions accepted. `region` is nil
    /// only for `at: 1m` (a device's reference power, no region) and for a forget of a reference power.
    public static func parse(verb: String, payload: [UInt8], regions: Set<String>) -> Result<TeachCommand, Failure> {
        func bad(_ id: String?, _ field: String, _ message: String) -> Result<TeachCommand, Failure> {
            .failure(Failure(id: id, kind: "bad_request", step: field, message: message))
        }
        let envelope: CommandEnvelope
        switch CommandEnvelope.read(
            verb: verb, payload: payload, verbs: verbs, group: "regions", maxPayload: maxPayload,
            allowed: verb == "teach" ? ["id", "region", "device", "at", "seconds"] : ["id", "region", "device"])
        {
        case let .success(read): envelope = read
        case let .failure(failure): return .failure(failure)
        }
        let (id, json) = (envelope.id, envelope.json)
        guard case let .string(device)? = json["device"], CommandEnvelope.isPrintable(device, max: 256) else {
            return bad(id, "device", "`device` (a beacon id, 1-256 printable characters) is required as a string")
        }
        var spot = TeachSpot.boundary
        if verb == "teach" {
            guard case let .string(at)? = json["at"], let parsed = TeachSpot(rawValue: at) else {
                return bad(id, "at", "`at` must be one of boundary, inside, 1m")
            }
            spot = parsed
        }
        var region: String?
        if let value = json["region"] {
            guard case let .string(name) = value, CommandEnvelope.isPrintable(name, max: 256) else {
                return bad(id, "region", "`region` must be a region's name as a string")
            }
            guard regions.contains(name) else {
                let known = regions.sorted().joined(separator: ", ")
                return .failure(
                    Failure(
                        id: id, kind: "unknown_region", step: "region",
                        message:
                            "`\(String(name.prefix(64)))` is not a configured region (\(known.isEmpty ? "none" : known))"
                    ))
            }
            region = name
        }
        // A forget without a region forgets the device's reference power (what `at: 1m` taught).
        if region == nil, verb == "teach", spot != .oneMetre {
            return bad(id, "region", "`region` (a configured region) is required unless `at` is 1m")
        }
        guard verb == "teach" else { return .success(.forget(id: id, region: region, device: device)) }
        if spot == .oneMetre { region = nil }
        var seconds = defaultSeconds
        if let value = json["seconds"] {
            let number: Double? =
                switch value {
                case let .int(v): Double(v)
                case let .double(v): v
                default: nil
                }
            guard let number, number.isFinite, secondsRange.contains(number) else {
                return bad(id, "seconds", "`seconds` must be a number of 1...120")
            }
            seconds = number
        }
        return .success(.teach(id: id, region: region, device: device, spot: spot, seconds: seconds))
    }
}
