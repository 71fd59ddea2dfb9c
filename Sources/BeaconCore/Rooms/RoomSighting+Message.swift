extension RoomSighting {
    /// Reads another gateway's `sighting` payload (docs/schemas/sighting.schema.json) received on
    /// `<prefix>/<gateway>/sighting/<beacon_id>`; the gateway is the topic's. nil for anything that is not a
    /// sighting with a finite time and RSSI (a gateway's "gone" sighting has RSSI null), or too large.
    public init?(gatewayID: String, payload: [UInt8]) {
        guard payload.count <= 65_536, let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 16),
            json["kind"]?.roomText == "sighting",
            let beacon = json["beacon_id"]?.roomText, !beacon.isEmpty, beacon.utf8.count <= 256,
            let time = json["time"]?.roomNumber, time.isFinite
        else { return nil }
        let raw = json["rssi"]?.roomNumber
        guard let rssi = json["rssi_smoothed"]?.roomNumber ?? raw, rssi.isFinite, (-200...200).contains(rssi) else {
            return nil
        }
        let distance = json["distance"]?.roomNumber.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let rate = json["report_rate"]?.roomNumber.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? 0
        self.init(
            gatewayID: gatewayID, beaconID: beacon, time: time, rssi: rssi,
            rawRSSI: raw.flatMap { $0.isFinite ? $0 : nil }, distance: distance, reportRate: rate)
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
    var roomInteger: Int64? { if case let .int(value) = self { value } else { nil } }
}
