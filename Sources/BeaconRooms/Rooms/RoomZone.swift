import BeaconConfigReading
import BeaconModel

/// One zone of a large site (`rooms.zones`, docs/rooms.md "Large sites"): a part of the site with a leader of its
/// own. A gateway of a zone takes evidence only from the zone's gateways (it subscribes their sightings and
/// availability one by one, so the broker sends it nothing of the other zones), elects its leader among them and
/// publishes the zone's room decisions under `<prefix>/zones/<name>/rooms/...` (`RoomTopics`).
public struct RoomZone: Sendable, Equatable {
    /// `name`: a topic level (1-64 letters, digits, `_` or `-`).
    public var name: String
    /// `gateways`: the zone's gateway ids (each in `rooms.gateways`, in one zone only).
    public var gateways: [String]
    /// `rooms`: the zone's rooms (every room of the site in one zone; each has a gateway of the zone, or is in
    /// `rooms.rooms_without_gateway`).
    public var rooms: [String]

    public init(name: String, gateways: [String], rooms: [String]) {
        self.name = name
        self.gateways = gateways
        self.rooms = rooms
    }

    /// One element of `rooms.zones`.
    init(from r: inout ConfigReader) {
        self.init(
            name: r.requiredString("name") ?? "", gateways: r.list("gateways", of: String.self),
            rooms: r.list("rooms", of: String.self))
    }

    /// The most zones a site may declare (each is a leader and a set of subscriptions on every gateway of it).
    public static let maximumZones = 256
}

extension RoomSettings {
    /// The zone this gateway belongs to (nil: the site has no zones, or the gateway is in none, which
    /// `validateZones` refuses).
    public func zone(of gatewayID: String) -> RoomZone? {
        zones.first { $0.gateways.contains(gatewayID) }
    }

    /// The problems of `rooms.zones` against the site's gateways (`site`: `rooms.gateways` and this gateway's
    /// room), each at its key path: every gateway and every room in exactly one zone, a zone's rooms those of its
    /// gateways, names that can be topic levels.
    func validateZones(site: [String: String], gateway: GatewaySettings) -> [ConfigIssue] {
        guard !zones.isEmpty else { return [] }
        var issues: [ConfigIssue] = []
        if zones.count > RoomZone.maximumZones {
            issues.append(
                ConfigIssue(path: "rooms.zones", message: "at most \(RoomZone.maximumZones) zones, got \(zones.count)"))
        }
        var zoneOfGateway: [String: String] = [:]
        var zoneOfRoom: [String: String] = [:]
        var names: Set<String> = []
        for (index, zone) in zones.enumerated() {
            let path = "rooms.zones[\(index)]"
            if !GatewaySettings.isValidIdentifier(zone.name) {
                issues.append(
                    ConfigIssue(
                        path: path + ".name",
                        message:
                            "`\(zone.name)` is not a valid zone name (1-64 letters, digits, `_` or `-`; it becomes an MQTT topic level)"
                    ))
            } else if !names.insert(zone.name).inserted {
                issues.append(ConfigIssue(path: path + ".name", message: "zone `\(zone.name)` is declared twice"))
            }
            if zone.gateways.isEmpty {
                issues.append(ConfigIssue(path: path + ".gateways", message: "a zone needs at least one gateway"))
            }
            for (position, id) in zone.gateways.enumerated() {
                let at = path + ".gateways[\(position)]"
                if let other = zoneOfGateway[id] {
                    issues.append(
                        ConfigIssue(
                            path: at, message: "gateway `\(id)` is in zone `\(other)` already: a gateway is in one zone"
                        ))
                    continue
                }
                zoneOfGateway[id] = zone.name
                if site[id] == nil {
                    issues.append(ConfigIssue(path: at, message: "`\(id)` is not a gateway of rooms.gateways"))
                }
            }
            for (position, room) in zone.rooms.enumerated() {
                let at = path + ".rooms[\(position)]"
                if let other = zoneOfRoom[room] {
                    issues.append(
                        ConfigIssue(
                            path: at, message: "room `\(room)` is in zone `\(other)` already: a room is in one zone"))
                    continue
                }
                zoneOfRoom[room] = zone.name
                if !Set(site.values).contains(room), !roomsWithoutGateway.contains(room) {
                    issues.append(
                        ConfigIssue(
                            path: at,
                            message:
                                "`\(room)` is not the room of any gateway of rooms.gateways nor in rooms.rooms_without_gateway"
                        ))
                }
            }
        }
        // Every gateway in a zone, and each gateway's room in that same zone (its evidence is its zone's only).
        for (id, room) in site.sorted(by: { $0.key < $1.key }) {
            guard let zone = zoneOfGateway[id] else {
                let path = id == gateway.id && gateways[id] == nil ? "gateway.id" : "rooms.gateways.\(id)"
                issues.append(
                    ConfigIssue(path: path, message: "gateway `\(id)` is in no zone of rooms.zones: list it in one"))
                continue
            }
            if let roomZone = zoneOfRoom[room], roomZone != zone {
                issues.append(
                    ConfigIssue(
                        path: "rooms.gateways.\(id)",
                        message:
                            "gateway `\(id)` is in zone `\(zone)` but its room `\(room)` is in zone `\(roomZone)`: a room and its gateways are in one zone"
                    ))
            }
        }
        for room in Set(site.values).union(roomsWithoutGateway).sorted() where zoneOfRoom[room] == nil {
            let hint = Set(site.values).contains(room) ? "its gateways' zone" : "the zone whose gateways hear it"
            issues.append(
                ConfigIssue(path: "rooms.zones", message: "room `\(room)` is in no zone: list it in \(hint)"))
        }
        return issues
    }
}
