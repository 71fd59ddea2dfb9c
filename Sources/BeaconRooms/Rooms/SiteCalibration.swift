import BeaconModel

/// Self-calibration as a gateway runs it (docs/rooms.md, "Self-calibration"): recognises the site's identity
/// beacons among the sightings (theirs are never room evidence), feeds what each gateway hears of the others to
/// `GatewayCalibration`, solves every `solveInterval` seconds of capture time, keeps the offsets the leader last
/// published (restored from the retained `<prefix>/rooms/calibration` at start or takeover) and says which
/// receive offsets the arbiter subtracts.
///
/// Pure: times come with the calls, no I/O.
public struct SiteCalibration: Sendable {
    public let settings: CalibrationSettings
    /// Identity beacon id -> gateway id, for every gateway of the site.
    public private(set) var identities: [String: String]
    public private(set) var solver: GatewayCalibration
    /// The last solve (nil before the first).
    public private(set) var solution: GatewayCalibration.Solution?
    /// Offsets read from a published calibration (another leader's, or ours before a restart), by gateway.
    public private(set) var restored: [String: GatewayCalibration.Offset] = [:]
    public private(set) var restoredTime: Timestamp?
    var lastSolve: Timestamp = -.infinity
    /// Identity sightings recorded, and refused by the solver (out of range, too old, ...).
    public private(set) var recorded = 0
    public private(set) var refused = 0

    public init(settings: CalibrationSettings, gateways: some Sequence<String>) {
        self.settings = settings
        self.identities = settings.identities(of: gateways)
        self.solver = GatewayCalibration(settings: settings.solverSettings)
    }

    /// The site's gateways changed (a reload): identities follow, samples are kept.
    public mutating func setGateways(_ gateways: some Sequence<String>) {
        identities = settings.identities(of: gateways)
    }

    /// The gateway whose identity beacon this is, nil for any other beacon.
    public func gateway(identifiedBy beaconID: String) -> String? { identities[beaconID] }

    /// Takes a sighting if it is a site gateway's identity beacon heard by another site gateway (true: it is not
    /// room evidence, whether recorded or refused). The raw report's level is used when the sighting carries
    /// one (the solver takes medians of single reports, as the simulator scored it).
    public mutating func take(_ sighting: RoomSighting) -> Bool {
        guard let transmitter = identities[sighting.beaconID] else { return false }
        guard settings.enabled, identities.values.contains(sighting.gatewayID) else {
            refused += 1
            return true
        }
        let level = sighting.rawRSSI ?? sighting.rssi
        if solver.record(receiver: sighting.gatewayID, transmitter: transmitter, rssi: level, at: sighting.time) == nil
        {
            recorded += 1
        } else {
            refused += 1
        }
        return true
    }

    /// Solves when `solveInterval` seconds of capture time have passed since the last solve; the new solution.
    public mutating func solveIfDue(at now: Timestamp) -> GatewayCalibration.Solution? {
        guard settings.enabled, now.isFinite, now - lastSolve >= settings.solveInterval else { return nil }
        lastSolve = now
        let solved = solver.solve(at: now)
        solution = solved
        return solved
    }

    /// The offset used for a gateway: this gateway's own solve where the gateway is in a pair, else the restored
    /// one where that was in a pair, else none.
    public func solvedOffset(of gatewayID: String) -> GatewayCalibration.Offset? {
        if let own = solution?.offset(of: gatewayID), own.pairs > 0 { return own }
        if let old = restored[gatewayID], old.pairs > 0 { return old }
        return nil
    }

    /// The receive offsets the arbiter subtracts: the solved ones combined with the hand-typed `hand` as
    /// `hand_offsets` says (`override`: a hand value wins for its gateway; `fallback`: a solved one does).
    public func receiverOffsets(hand: [String: Double]) -> [String: Double] {
        guard settings.enabled else { return hand }
        var result = hand
        for gateway in Set(identities.values).sorted() {
            guard let solved = solvedOffset(of: gateway) else { continue }
            if settings.handOffsets == .override, hand[gateway] != nil { continue }
            result[gateway] = solved.receive
        }
        return result
    }

    /// Reads a published calibration (`payload(...)`'s format); false when it is not one. Values beyond
    /// ±60 dB, not finite, or for gateways not of the site are skipped.
    @discardableResult
    public mutating func restore(payload: [UInt8]) -> Bool {
        guard payload.count <= 65_536, let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 8),
            json["kind"]?.roomText == "calibration", let time = json["time"]?.roomNumber, time.isFinite,
            case let .array(rows)? = json["gateways"]
        else { return false }
        let site = Set(identities.values)
        var offsets: [String: GatewayCalibration.Offset] = [:]
        for row in rows.prefix(settings.solverSettings.maximumGateways) {
            guard let id = row["gateway"]?.roomText, site.contains(id),
                let receive = row["receive_offset_db"]?.roomNumber, receive.isFinite, abs(receive) <= 60
            else { continue }
            func number(_ key: String) -> Double {
                guard let value = row[key]?.roomNumber, value.isFinite, abs(value) <= 1e6 else { return 0 }
                return value
            }
            offsets[id] = GatewayCalibration.Offset(
                gatewayID: id, receive: receive, transmit: max(-60, min(60, number("transmit_offset_db"))),
                difference: 0, uncertainty: max(0, number("uncertainty_db")),
                confidence: max(0, min(1, number("confidence"))),
                pairs: Int(max(0, min(64, number("pairs")))), samples: Int(max(0, min(1e6, number("samples")))),
                residual: max(0, number("residual_db")))
        }
        restored = offsets
        restoredTime = time
        return true
    }

    /// The retained calibration a leader publishes: every gateway's offsets of the last solve (JSON, keys in
    /// this order; docs/mqtt.md).
    public static func payload(_ solution: GatewayCalibration.Solution, leader: String) -> String {
        func rounded(_ value: Double) -> JSONValue { .double((value * 100).rounded() / 100) }
        let rows: [JSONValue] = solution.offsets.map { offset in
            .object([
                ("gateway", .string(offset.gatewayID)),
                ("receive_offset_db", rounded(offset.receive)),
                ("transmit_offset_db", rounded(offset.transmit)),
                ("uncertainty_db", rounded(offset.uncertainty)),
                ("confidence", .double((offset.confidence * 1000).rounded() / 1000)),
                ("pairs", .int(Int64(offset.pairs))),
                ("samples", .int(Int64(offset.samples))),
                ("residual_db", rounded(offset.residual)),
            ])
        }
        return JSONValue.object([
            ("kind", .string("calibration")),
            ("gateway", .string(leader)),
            ("time", .double(solution.time)),
            ("pairs", .int(Int64(solution.pairs))),
            ("gateways", .array(rows)),
        ]).serialized
    }
}
