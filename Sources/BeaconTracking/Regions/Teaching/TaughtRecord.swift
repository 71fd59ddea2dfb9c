import BeaconModel

/// What one gateway was taught for one device: a region's link (boundary and inside) or, with `region` nil, the
/// device's level at 1 m (its reference power). Stored in the gateway's database and published retained on
/// `<prefix>/regions/taught/<gateway>/<region>/<device>` or `<prefix>/regions/reference/<gateway>/<device>`
/// (docs/mqtt.md, "Regions commands"), so every gateway of the site, and a new one, has them.
public struct TaughtRecord: Sendable, Equatable {
    /// The topic prefix of the site that taught it.
    public var site: String
    public var gateway: String
    public var region: String?
    public var device: String
    public var levels: [TeachSpot: TaughtLevel]
    /// Capture time of the last teach's end.
    public var recorded: Timestamp
    /// What the teaching gateway heard of the other gateways' identity beacons when it was taught (dBm by gateway
    /// id, self-calibration's medians; empty without self-calibration): the spot the gateway stood at.
    public var anchors: [String: Double] = [:]
    /// Set once self-calibration says the gateway moved since (`TaughtRecord+Moved.swift`): re-teach it.
    public var moved: TaughtMove?

    public init(
        site: String, gateway: String, region: String?, device: String, levels: [TeachSpot: TaughtLevel],
        recorded: Timestamp
    ) {
        self.site = site
        self.gateway = gateway
        self.region = region
        self.device = device
        self.levels = levels
        self.recorded = recorded
    }

    /// The region link it holds (nil for a reference power record).
    public var link: TaughtRegionLink? {
        region == nil ? nil : TaughtRegionLink(boundary: levels[.boundary], inside: levels[.inside])
    }

    /// The reference power it holds, dBm rounded (nil for a region record).
    public var referencePower: Int? {
        guard region == nil, let level = levels[.oneMetre]?.level, level.isFinite else { return nil }
        return Int(level.rounded())
    }

    /// Its retained topic under `prefix`.
    public func topic(prefix: String) -> String {
        if let region {
            return prefix + "/regions/taught/" + TopicLevel.safe(gateway) + "/" + TopicLevel.safe(region) + "/"
                + TopicLevel.safe(device)
        }
        return prefix + "/regions/reference/" + TopicLevel.safe(gateway) + "/" + TopicLevel.safe(device)
    }

    /// The subscriptions that carry every gateway's records.
    public static func filters(prefix: String) -> [String] {
        [prefix + "/regions/taught/+/+/+", prefix + "/regions/reference/+/+"]
    }

    // MARK: JSON (docs/mqtt.md)

    public var json: String {
        let spots: [(String, JSONValue)] = TeachSpot.allCases.compactMap { spot in
            levels[spot].map { level in
                (
                    spot.rawValue,
                    .object([
                        ("level", .double((level.level * 100).rounded() / 100)),
                        ("spread", .double((level.spread * 100).rounded() / 100)),
                        ("reports", .int(Int64(level.reports))),
                        ("seconds", .double((level.seconds * 100).rounded() / 100)),
                    ])
                )
            }
        }
        return JSONValue.object(
            [
                ("kind", .string("taught")), ("site", .string(site)), ("gateway", .string(gateway)),
                ("region", region.map { .string($0) } ?? .null), ("device", .string(device)),
                ("recorded", .double(recorded)), ("levels", .object(spots)),
            ] + movedMembers
        ).serialized
    }

    /// Reads a record, checking every value: it must be of `site`, its region one of `regions`, each level
    /// within what a receiver reports, and (when `topic` is given) published on its own topic. The refusal names
    /// the first problem.
    public static func parse(
        _ payload: [UInt8], site: String, regions: Set<String>, topic: String? = nil
    ) -> Result<TaughtRecord, TeachCommand.Failure> {
        func refuse(_ step: String, _ message: String) -> Result<TaughtRecord, TeachCommand.Failure> {
            .failure(TeachCommand.Failure(id: nil, kind: "refused", step: step, message: message))
        }
        guard payload.count <= TeachCommand.maxPayload, let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 5), case .object = json
        else { return refuse("payload", "not a JSON object of at most \(TeachCommand.maxPayload) bytes") }
        guard json["kind"] == .string("taught") else { return refuse("kind", "`kind` is not \"taught\"") }
        guard case let .string(recordSite)? = json["site"] else { return refuse("site", "`site` is missing") }
        guard recordSite == site else {
            return refuse("site", "taught on site `\(String(recordSite.prefix(64)))`, not this site `\(site)`")
        }
        guard case let .string(gateway)? = json["gateway"], CommandEnvelope.isPrintable(gateway, max: 128) else {
            return refuse("gateway", "`gateway` must be a gateway id")
        }
        guard case let .string(device)? = json["device"], CommandEnvelope.isPrintable(device, max: 256) else {
            return refuse("device", "`device` must be a beacon id")
        }
        var region: String?
        switch json["region"] {
        case .null?, nil: region = nil
        case let .string(name)?:
            guard regions.contains(name) else {
                return refuse("region", "`\(String(name.prefix(64)))` is not a configured region")
            }
            region = name
        default: return refuse("region", "`region` must be a string or null")
        }
        let recorded: Double? =
            switch json["recorded"] {
            case let .int(v)?: Double(v)
            case let .double(v)?: v
            default: nil
            }
        guard let recorded, recorded.isFinite, recorded >= 0 else {
            return refuse("recorded", "`recorded` must be a capture time")
        }
        guard case let .object(members)? = json["levels"], !members.isEmpty, members.count <= 3 else {
            return refuse("levels", "`levels` must hold boundary, inside or 1m")
        }
        var levels: [TeachSpot: TaughtLevel] = [:]
        for (name, value) in members {
            guard let spot = TeachSpot(rawValue: name), levels[spot] == nil else {
                return refuse("levels", "unknown or repeated spot `\(String(name.prefix(32)))`")
            }
            guard (spot == .oneMetre) == (region == nil) else {
                return refuse(
                    "levels", "`\(name)` does not go with \(region == nil ? "a reference power" : "a region")")
            }
            guard let level = Self.level(value) else {
                return refuse(
                    "levels",
                    "`\(name)` needs level (-127...20 dBm), spread (0...60 dB), reports (1...100000), seconds (0...3600)"
                )
            }
            levels[spot] = level
        }
        var record = TaughtRecord(
            site: site, gateway: gateway, region: region, device: device, levels: levels, recorded: recorded)
        if let failure = record.readMoved(json) { return .failure(failure) }
        if let topic, topic != record.topic(prefix: site) {
            return refuse("topic", "published on `\(String(topic.prefix(200)))`, not its own topic")
        }
        return .success(record)
    }

    private static func level(_ value: JSONValue) -> TaughtLevel? {
        func number(_ key: String) -> Double? {
            switch value[key] {
            case let .int(v)?: Double(v)
            case let .double(v)?: v
            default: nil
            }
        }
        guard let level = number("level"), (-127...20).contains(level), let spread = number("spread"),
            (0...60).contains(spread), let reports = number("reports"), (1...100_000).contains(reports),
            reports == reports.rounded(), let seconds = number("seconds"), (0...3600).contains(seconds)
        else { return nil }
        return TaughtLevel(level: level, spread: spread, reports: Int(reports), seconds: seconds)
    }
}
