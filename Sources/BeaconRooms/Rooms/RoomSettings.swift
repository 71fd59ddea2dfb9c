import BeaconConfigReading
import BeaconModel

/// The `rooms` section: the room arbiter running inside the gateway (docs/rooms.md, "Where it runs"). Off by
/// default. Every gateway of a site that enables it uses the same section (the same `gateways` map and rule
/// parameters), so whichever of them leads decides the same way.
public struct RoomSettings: Sendable, Equatable {
    /// `rooms.enabled`
    public var enabled = false
    /// `rooms.gateways`: every gateway id of the site and the room it stands in. This gateway may be left out
    /// when `gateway.room` is set.
    public var gateways: [String: String] = [:]
    /// `rooms.rooms_without_gateway`: rooms of the site that no gateway stands in (issue 43, Bermuda's
    /// "scannerless rooms"). Only the fingerprint classifier names one, from its training walk's levels at the
    /// other rooms' gateways: so `fingerprint_classifier` must be on, and the room trained like every other.
    public var roomsWithoutGateway: [String] = []
    /// The rule's parameters (`rooms.margin_db` ... `rooms.receiver_offsets_db`); `gatewayRooms` is `gateways`.
    public var arbiter = RoomArbiterSettings()
    /// `rooms.leader_settle_s`: seconds after this gateway sees its own `online` on the broker before it may
    /// lead (time for every other gateway's retained availability to arrive, so two never lead at once).
    public var leaderSettle: Double = 2
    /// `rooms.replay_wait_for_gateways`: replay only: wait (at most 60 s) until this many gateways of
    /// `gateways` are online before the capture starts, so the replays of several gateways run side by side.
    public var replayWaitForGateways = 0
    /// `rooms.calibration`: self-calibration (on with `rooms.enabled` unless turned off).
    public var calibration = CalibrationSettings()
    /// `rooms.reference_tags`: stationary beacons declared in a room (beacon id -> room), a continuous check of
    /// the decisions (`RoomReferenceCheck`).
    public var referenceTags: [String: String] = [:]
    /// `rooms.training`: the device Home Assistant's training buttons use (issue 29).
    public var training = TrainingSettings()
    /// `rooms.zones`: a large site split into zones, each with a leader of its own (`RoomZone`); empty: the
    /// whole site is one zone with one leader, under `<prefix>/rooms`.
    public var zones: [RoomZone] = []

    public init() {}

    /// Whether this gateway solves and uses the offsets.
    public var calibrates: Bool { enabled && calibration.enabled }
    /// Whether this gateway sends its identity beacon.
    public var advertisesIdentity: Bool { calibrates && calibration.advertise }

    /// The gateway-to-room map the arbiter uses: `gateways`, plus this gateway's `gateway.room` if missing.
    public func gatewayRooms(own gateway: GatewaySettings) -> [String: String] {
        var rooms = gateways
        if rooms[gateway.id] == nil, let room = gateway.room { rooms[gateway.id] = room }
        return rooms
    }

    /// Every room of the site: the gateways' rooms and the rooms without a gateway.
    public func siteRooms(own gateway: GatewaySettings) -> Set<String> {
        Set(gatewayRooms(own: gateway).values).union(roomsWithoutGateway)
    }

    /// The arbiter's settings with the site's gateway rooms (and rooms without a gateway) filled in: those of this
    /// gateway's zone only when the site has zones (the other zones' gateways are neither evidence nor leader
    /// candidates).
    public func arbiterSettings(own gateway: GatewaySettings) -> RoomArbiterSettings {
        var settings = arbiter
        settings.gatewayRooms = gatewayRooms(own: gateway)
        settings.roomsWithoutGateway = Set(roomsWithoutGateway)
        if let zone = zone(of: gateway.id) {
            let members = Set(zone.gateways)
            settings.gatewayRooms = settings.gatewayRooms.filter { members.contains($0.key) }
            settings.receiverOffsets = settings.receiverOffsets.filter { members.contains($0.key) }
            settings.roomsWithoutGateway = settings.roomsWithoutGateway.intersection(zone.rooms)
        }
        return settings
    }

    /// The topics of this gateway's room decisions: its zone's namespace when the site has zones.
    public func topics(prefix: String, own gateway: GatewaySettings) -> RoomTopics {
        guard let zone = zone(of: gateway.id) else { return RoomTopics(prefix: prefix) }
        return RoomTopics(prefix: prefix, zone: zone.name, gateways: zone.gateways)
    }

    /// Problems with these settings, in the context of this gateway.
    public func validate(gateway: GatewaySettings) -> [ConfigIssue] {
        var issues = arbiter.validate(path: "rooms")
        if !(leaderSettle.isFinite && (0...60).contains(leaderSettle)) {
            issues.append(
                ConfigIssue(path: "rooms.leader_settle_s", message: "must be 0...60 seconds, got \(leaderSettle)"))
        }
        if !(0...64).contains(replayWaitForGateways) {
            issues.append(
                ConfigIssue(
                    path: "rooms.replay_wait_for_gateways", message: "must be 0...64, got \(replayWaitForGateways)"))
        }
        for (id, room) in gateways.sorted(by: { $0.key < $1.key }) {
            if !GatewaySettings.isValidIdentifier(id) {
                issues.append(
                    ConfigIssue(
                        path: "rooms.gateways.\(id)",
                        message: "`\(id)` is not a valid gateway id (1-64 letters, digits, `_` or `-`)"))
            }
            if room == RoomProbabilities.level {
                issues.append(
                    ConfigIssue(
                        path: "rooms.gateways.\(id)",
                        message:
                            "`\(RoomProbabilities.level)` is reserved: it is the topic level of a beacon's room probabilities"
                    ))
            }
            if room == RoomArbiter.unknownRoom {
                issues.append(
                    ConfigIssue(
                        path: "rooms.gateways.\(id)",
                        message:
                            "`unknown` is reserved: it is the room of a beacon whose room's gateways are all offline"))
            }
            if !GatewaySettings.isValidIdentifier(room) {
                issues.append(
                    ConfigIssue(
                        path: "rooms.gateways.\(id)",
                        message:
                            "`\(room)` is not a valid room (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic level)"
                    ))
            }
        }
        issues += validateRoomsWithoutGateway(gateway: gateway)
        for id in arbiter.receiverOffsets.keys.sorted() where gateways[id] == nil && id != gateway.id {
            issues.append(
                ConfigIssue(
                    path: "rooms.receiver_offsets_db.\(id)",
                    message: "`\(id)` is not a gateway of rooms.gateways"))
        }
        guard enabled else { return issues }
        let site = gatewayRooms(own: gateway)
        let siteRooms = siteRooms(own: gateway)
        if referenceTags.count > RoomReferenceCheck.maximumTags {
            issues.append(
                ConfigIssue(
                    path: "rooms.reference_tags",
                    message: "at most \(RoomReferenceCheck.maximumTags) tags, got \(referenceTags.count)"))
        }
        for (beacon, room) in referenceTags.sorted(by: { $0.key < $1.key }) where !siteRooms.contains(room) {
            issues.append(
                ConfigIssue(
                    path: "rooms.reference_tags.\(beacon)",
                    message:
                        "`\(room)` is not a room of the site (\(siteRooms.sorted().joined(separator: ", ")))"))
        }
        issues += validateZones(site: site, gateway: gateway)
        issues += calibration.validate(gateways: site.keys)
        issues += training.validate()
        // A replay waits for the gateways it elects among: its zone's when the site has zones.
        if let zone = zone(of: gateway.id), replayWaitForGateways > zone.gateways.count {
            issues.append(
                ConfigIssue(
                    path: "rooms.replay_wait_for_gateways",
                    message:
                        "\(replayWaitForGateways) is more than zone `\(zone.name)`'s \(zone.gateways.count) gateway(s): a replay waits for its own zone's gateways only"
                ))
        } else if replayWaitForGateways > site.count {
            issues.append(
                ConfigIssue(
                    path: "rooms.replay_wait_for_gateways",
                    message:
                        "\(replayWaitForGateways) is more than the site's \(site.count) gateway(s) (rooms.gateways and this one): a replay would wait its 60 s for gateways that do not exist"
                ))
        }
        if site[gateway.id] == nil {
            issues.append(
                ConfigIssue(
                    path: "rooms.gateways",
                    message: "this gateway (`\(gateway.id)`) has no room: list it here or set gateway.room"))
        }
        if !zones.isEmpty, gateway.id == RoomTopics.zonesLevel {
            issues.append(
                ConfigIssue(
                    path: "gateway.id",
                    message:
                        "`\(RoomTopics.zonesLevel)` is the topic level of the zones' room events: choose another gateway id with rooms.zones"
                ))
        }
        if gateway.id == RoomTopics.level {
            issues.append(
                ConfigIssue(
                    path: "gateway.id",
                    message:
                        "`\(RoomTopics.level)` is the topic level of the room events: choose another gateway id with rooms.enabled"
                ))
        }
        return issues
    }
}

extension RoomSettings {
    /// The problems of `rooms.rooms_without_gateway`, each at its index: a valid room name, not reserved, listed
    /// once, not a gateway's room, and the classifier on (the level rule names a room by its gateways only, so
    /// without the classifier such a room could never be shown).
    func validateRoomsWithoutGateway(gateway: GatewaySettings) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        let site = gatewayRooms(own: gateway)
        var seen: Set<String> = []
        for (index, room) in roomsWithoutGateway.enumerated() {
            let path = "rooms.rooms_without_gateway[\(index)]"
            if !GatewaySettings.isValidIdentifier(room) {
                issues.append(
                    ConfigIssue(
                        path: path,
                        message:
                            "`\(room)` is not a valid room (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic level)"
                    ))
            } else if room == RoomArbiter.unknownRoom || room == RoomProbabilities.level {
                issues.append(ConfigIssue(path: path, message: "`\(room)` is reserved: choose another room name"))
            } else if !seen.insert(room).inserted {
                issues.append(ConfigIssue(path: path, message: "`\(room)` is listed twice"))
            } else if let id = site.filter({ $0.value == room }).keys.min() {
                issues.append(
                    ConfigIssue(
                        path: path,
                        message:
                            "`\(room)` has a gateway (`\(id)` in rooms.gateways): list here only rooms that no gateway stands in"
                    ))
            }
        }
        if !roomsWithoutGateway.isEmpty, !arbiter.classifier.enabled, !arbiter.classifier.rule {
            issues.append(
                ConfigIssue(
                    path: "rooms.rooms_without_gateway",
                    message:
                        "only the fingerprint classifier or the fingerprint margin rule can name a room without a gateway: set rooms.fingerprint_classifier: true or rooms.fingerprint_rule: true and train every room (docs/rooms.md, \"Rooms without a gateway\")"
                ))
        }
        return issues
    }
}
