import BeaconModel

/// What `beaconbridge rooms status` shows (docs/rooms.md, "Self-calibration", "Large sites"): per gateway of the
/// site, its zone, whether it is online (its retained availability) and the offsets of the leader's retained
/// calibration; then who leads each zone (the whole site without zones). Fed the messages a subscriber
/// receives; pure.
public struct RoomsStatus: Sendable {
    public struct Row: Sendable, Equatable {
        public var gatewayID: String
        public var room: String?
        /// The gateway's zone (nil: the site has no zones, or the gateway is in none of them).
        public var zone: String?
        /// nil: no availability seen.
        public var online: Bool?
        public var offset: GatewayCalibration.Offset?
    }

    public let topics: RoomTopics
    public let rooms: [String: String]
    /// `rooms.zones` (empty: the site is one zone).
    public let zones: [RoomZone]
    public private(set) var online: [String: Bool] = [:]
    public private(set) var calibration = SiteCalibration(settings: CalibrationSettings(), gateways: [String]())
    public private(set) var calibrationLeader: String?
    public private(set) var calibrationTime: Timestamp?
    /// Messages on the calibration topic that were not a calibration.
    public private(set) var malformed = 0
    /// The retained training fingerprints by room, and the gateway that published each (issue 29).
    public private(set) var fingerprints: [String: (fingerprint: RoomFingerprint, gateway: String?)] = [:]

    /// `rooms`: the site's gateways and their rooms (`RoomSettings.gatewayRooms(own:)`); `zones`: `rooms.zones`.
    /// The calibration and fingerprints read are those of `topics`' zone (this gateway's).
    public init(topics: RoomTopics, rooms: [String: String], zones: [RoomZone] = []) {
        self.topics = topics
        self.rooms = rooms
        self.zones = zones
    }

    public mutating func take(_ message: InboundMessage) {
        switch topics.parse(message.topic) {
        case let .availability(gateway):
            guard GatewaySettings.isValidIdentifier(gateway), online.count < 256 || online[gateway] != nil else {
                return
            }
            online[gateway] = message.payload.elementsEqual("online".utf8)
        case .calibration:
            // Every gateway the calibration names counts (a gateway missing from this configuration too).
            var names = Set(rooms.keys)
            if let text = String(validating: message.payload.prefix(65_536), as: UTF8.self),
                case let .array(rows)? = (try? JSONValue(parsing: text, maxDepth: 8))?["gateways"]
            {
                for row in rows.prefix(64) {
                    if let id = row["gateway"]?.roomText, GatewaySettings.isValidIdentifier(id) { names.insert(id) }
                }
            }
            var reader = SiteCalibration(settings: CalibrationSettings(), gateways: names)
            guard reader.restore(payload: message.payload) else {
                malformed += 1
                return
            }
            calibration = reader
            calibrationTime = reader.restoredTime
            calibrationLeader =
                (try? JSONValue(parsing: String(decoding: message.payload, as: UTF8.self), maxDepth: 8))?[
                    "gateway"]?.roomText
        case let .fingerprint(roomLevel):
            takeFingerprint(roomLevel: roomLevel, payload: message.payload)
        default:
            return
        }
    }

    /// One row per gateway: the site's, then any other that is online or in the calibration, sorted by id.
    public var rows: [Row] {
        let ids = Set(rooms.keys).union(online.keys).union(calibration.restored.keys).sorted()
        return ids.map { id in
            Row(
                gatewayID: id, room: rooms[id], zone: zones.first { $0.gateways.contains(id) }?.name,
                online: online[id], offset: calibration.restored[id])
        }
    }

    /// Who leads each zone (one entry, zone nil, without zones), as the gateways elect (`RoomCoordinator.leader`):
    /// the lowest id among the zone's gateways (the site's `rooms.gateways`) whose retained availability is
    /// `online`; nil when none is.
    public var leaders: [(zone: String?, gateways: [String], leader: String?)] {
        let groups: [(String?, [String])] =
            zones.isEmpty ? [(nil, rooms.keys.sorted())] : zones.map { ($0.name, $0.gateways.sorted()) }
        return groups.map { zone, gateways in
            (zone, gateways, gateways.filter { online[$0] == true }.min())
        }
    }

    /// The table as printed, a line per gateway under a header; then the calibration's leader and time.
    public func table(now: Timestamp) -> String {
        let zoned = !zones.isEmpty
        let header = [
            "gateway", "room", zoned ? "zone" : nil, "online", "receive_db", "transmit_db", "uncert_db", "confidence",
            "pairs", "samples",
        ].compactMap { $0 }
        var lines: [[String]] = [header]
        for row in rows {
            let offset = row.offset
            func decibels(_ value: Double?) -> String { value.map { String(($0 * 100).rounded() / 100) } ?? "-" }
            lines.append(
                [
                    row.gatewayID, row.room ?? "-", zoned ? row.zone ?? "-" : nil,
                    row.online.map { $0 ? "yes" : "no" } ?? "?",
                    decibels(offset?.receive), decibels(offset?.transmit), decibels(offset?.uncertainty),
                    offset.map { String(($0.confidence * 100).rounded() / 100) } ?? "-",
                    offset.map { String($0.pairs) } ?? "-", offset.map { String($0.samples) } ?? "-",
                ].compactMap { $0 })
        }
        var text = TextTable.render(lines) + "\n" + leaderLines
        if let zone = topics.zone { text += "\nzone \(zone)'s calibration and fingerprints (this gateway's zone):" }
        if let time = calibrationTime {
            let age = now.isFinite ? " (\(Int((now - time).rounded())) s ago)" : ""
            text += "\ncalibration: published by \(calibrationLeader ?? "?") at capture time \(time)\(age)"
        } else {
            text += "\ncalibration: none published yet (rooms.calibration off, or no leader has solved yet)"
        }
        return text + "\n" + fingerprintTable(now: now)
    }

    /// A line per zone (one without zones): its leader, or that none of its gateways is online.
    var leaderLines: String {
        leaders.map { zone, gateways, leader in
            let name = zone.map { "zone \($0)" } ?? "site"
            guard let leader else {
                return "\(name): no leader (none of \(gateways.joined(separator: ", ")) is online)"
            }
            return "\(name): leader \(leader) (the lowest online id of \(gateways.joined(separator: ", ")))"
        }
        .joined(separator: "\n")
    }
}

// MARK: Training fingerprints (issue 29)

extension RoomsStatus {
    /// A retained fingerprint on `<prefix>/rooms/fingerprint/<room>`: every gateway it names counts (one not in
    /// this configuration too); empty, the room has none; unreadable, counted as malformed.
    mutating func takeFingerprint(roomLevel: String, payload: [UInt8]) {
        if payload.isEmpty {
            if let room = fingerprints.keys.first(where: { TopicLevel.safe($0) == roomLevel }) {
                fingerprints[room] = nil
            }
            return
        }
        var names = Set(rooms.keys)
        let json = String(validating: payload.prefix(65_536), as: UTF8.self).flatMap {
            try? JSONValue(parsing: $0, maxDepth: 8)
        }
        if case let .array(rows)? = json?["gateways"] {
            for row in rows.prefix(RoomFingerprint.maximumGateways) {
                if let id = row["gateway"]?.roomText, GatewaySettings.isValidIdentifier(id) { names.insert(id) }
            }
        }
        guard let fingerprint = FingerprintBook.fingerprint(payload: payload, site: names),
            TopicLevel.safe(fingerprint.room) == roomLevel,
            fingerprints[fingerprint.room] != nil || fingerprints.count < FingerprintBook.maximumRooms
        else {
            malformed += 1
            return
        }
        fingerprints[fingerprint.room] = (fingerprint, json?["gateway"]?.roomText)
    }

    /// The fingerprints as printed: a line per room (walks, seconds, gateways heard, quality, age against
    /// `now`), or a line saying there are none.
    public func fingerprintTable(now: Timestamp) -> String {
        guard !fingerprints.isEmpty else {
            return "fingerprints: none (train a room: beaconbridge rooms train --room ROOM --device ID)"
        }
        var lines: [[String]] = [["room", "walks", "seconds", "gateways", "quality", "age_s", "by"]]
        for room in fingerprints.keys.sorted() {
            guard let (fingerprint, gateway) = fingerprints[room] else { continue }
            let age =
                now.isFinite && fingerprint.recorded.isFinite
                ? String(Int((now - fingerprint.recorded).rounded())) : "-"
            lines.append([
                room, String(fingerprint.walks), String((fingerprint.seconds * 10).rounded() / 10),
                fingerprint.levels.keys.sorted().joined(separator: ","),
                String((fingerprint.quality * 100).rounded() / 100), age, gateway ?? "?",
            ])
        }
        return "fingerprints:\n" + TextTable.render(lines)
    }
}
