import BeaconModel

/// What another gateway's message on `<prefix>/<gateway>/sighting/<beacon_id>` says.
public enum InboundRoomSighting: Sendable, Equatable {
    /// A sighting with a finite time and RSSI: evidence for the arbiter.
    case sighting(RoomSighting)
    /// The documented "gone" sighting (RSSI null): that gateway no longer hears the beacon. Not evidence (the
    /// arbiter ages evidence out by itself) and not malformed either.
    case gone(beaconID: String)
    /// Not what the topic promised (ignored, counted).
    case malformed
}

extension RoomSighting {
    /// Reads another gateway's `sighting` payload (docs/schemas/sighting.schema.json) received on
    /// `<prefix>/<gateway>/sighting/<beacon_id>`, the gateway being the topic's, and says what it is: evidence, a
    /// "gone" sighting (both RSSI fields null or absent), or malformed (not JSON, not a sighting, a non-finite time or RSSI, an RSSI out of
    /// -200...200, larger than 64 KiB).
    public static func inbound(gatewayID: String, payload: [UInt8]) -> InboundRoomSighting {
        guard payload.count <= 65_536, let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 16),
            json["kind"]?.roomText == "sighting",
            let beacon = json["beacon_id"]?.roomText, !beacon.isEmpty, beacon.utf8.count <= 256,
            let time = json["time"]?.roomNumber, time.isFinite
        else { return .malformed }
        let raw = json["rssi"]?.roomNumber
        let smoothed = json["rssi_smoothed"]?.roomNumber
        if json["rssi"]?.roomIsNull ?? true, json["rssi_smoothed"]?.roomIsNull ?? true {
            return .gone(beaconID: beacon)
        }
        guard let rssi = smoothed ?? raw, rssi.isFinite, (-200...200).contains(rssi) else { return .malformed }
        let distance = json["distance"]?.roomNumber.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let rate = json["report_rate"]?.roomNumber.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? 0
        return .sighting(
            RoomSighting(
                gatewayID: gatewayID, beaconID: beacon, time: time, rssi: rssi,
                rawRSSI: raw.flatMap { $0.isFinite ? $0 : nil }, distance: distance, reportRate: rate))
    }
}

extension JSONValue {
    /// The string, for the rooms readers (nil for other kinds).
    var roomText: String? { if case let .string(text) = self { text } else { nil } }
    /// An int or double as a double.
    var roomNumber: Double? {
        switch self {
        case let .int(value): Double(value)
        case let .double(value): value
        default: nil
        }
    }
    /// `null` (a "gone" sighting's RSSI).
    var roomIsNull: Bool { if case .null = self { true } else { false } }
    var roomInteger: Int64? { if case let .int(value) = self { value } else { nil } }
}
