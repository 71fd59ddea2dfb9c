import BeaconConfigReading

/// Parameters of the room arbiter (`RoomArbiter`), documented with their sources in docs/rooms.md.
public struct RoomArbiterSettings: Sendable, Equatable {
    /// The room of each gateway id (gateways not listed are ignored).
    public var gatewayRooms: [String: String]
    /// Rooms of the site that no gateway stands in (Bermuda's "scannerless rooms", issue 43): only the fingerprint
    /// classifier can name one, from its training walk's levels at the other rooms' gateways; the level rule,
    /// which names a room by its own gateways, never does. A name that is also a gateway's room changes nothing.
    public var roomsWithoutGateway: Set<String> = []
    /// Per-gateway receiver offset, dB: how much louder a gateway reads than the reference receiver; subtracted
    /// from its RSSI before rooms are compared (calibration, docs/rooms.md).
    public var receiverOffsets: [String: Double]
    /// dB by which a challenger room's signal must beat the current room's.
    public var margin: Double
    /// Seconds the margin must hold without a break before the challenger wins.
    public var dwell: Double
    /// Compare the gateways' last raw RSSI (true) or their smoothed RSSI (false).
    public var useRawRSSI: Bool = true
    /// Time constant (s) of the arbiter's own smoothing of each gateway's reported RSSI (0: use as reported).
    public var smoothingTime: Double
    /// Seconds of each gateway's samples whose median is its slow, robust level (long enough to span the
    /// scanner's channel rotation and outlast body-blocking episodes of up to half of it).
    public var medianWindow: Double = 60
    /// Fast path: the challenger's smoothed signal must also stand this many dB above its own median (it is
    /// getting nearer: a walk into its room, not the current room's signal dropping behind a body).
    public var rise: Double = 6
    /// Slow path: a challenger whose median beats the current room's median by `slowMargin` dB for `slowDwell`
    /// seconds wins too (a beacon at rest in an ambiguous spot, decided on long averages).
    public var slowMargin: Double = 2
    public var slowDwell: Double = 10
    /// A gateway's evidence older than this (s) loses `staleDecay` dB per further second...
    public var staleAfter: Double
    public var staleDecay: Double
    /// ...and is dropped after this many seconds.
    public var evidenceMaxAge: Double
    /// Seconds heard by no gateway before a beacon is `not_home`.
    public var awayTimeout: Double
    /// Seconds of evidence gathered before a beacon's first room (or its first after `not_home`) is decided.
    public var settleTime: Double
    /// Persisted decisions older than this are not restored (s).
    public var restoreMaxAge: Double
    /// The fingerprint classifier's parameters (issue 29), used when every room has a fingerprint.
    public var classifier = RoomClassifierSettings()

    public init(
        gatewayRooms: [String: String] = [:], receiverOffsets: [String: Double] = [:], margin: Double = 8,
        dwell: Double = 4, smoothingTime: Double = 2, staleAfter: Double = 8, staleDecay: Double = 1,
        evidenceMaxAge: Double = 30, awayTimeout: Double = 60, settleTime: Double = 2,
        restoreMaxAge: Double = 900
    ) {
        self.gatewayRooms = gatewayRooms
        self.receiverOffsets = receiverOffsets
        self.margin = margin
        self.dwell = dwell
        self.smoothingTime = smoothingTime
        self.staleAfter = staleAfter
        self.staleDecay = staleDecay
        self.evidenceMaxAge = evidenceMaxAge
        self.awayTimeout = awayTimeout
        self.settleTime = settleTime
        self.restoreMaxAge = restoreMaxAge
    }

    /// Problems with these settings; `path` is the key path of the block.
    public func validate(path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func check(_ key: String, _ value: Double, _ range: ClosedRange<Double>, _ unit: String) {
            issues.appendRangeIssue("\(path).\(key)", value, range, unit)
        }
        check("margin_db", margin, 0...40, "dB")
        check("dwell_s", dwell, 0...600, "seconds")
        check("smoothing_s", smoothingTime, 0...120, "seconds")
        check("median_window_s", medianWindow, 1...600, "seconds")
        check("rise_db", rise, -40...40, "dB")
        check("slow_margin_db", slowMargin, 0...40, "dB")
        check("slow_dwell_s", slowDwell, 0...3_600, "seconds")
        check("stale_after_s", staleAfter, 0...3_600, "seconds")
        check("stale_decay_db_per_s", staleDecay, 0...100, "dB/s")
        check("evidence_max_age_s", evidenceMaxAge, 0.1...3_600, "seconds")
        check("away_timeout_s", awayTimeout, 1...86_400, "seconds")
        check("settle_s", settleTime, 0...600, "seconds")
        check("restore_max_age_s", restoreMaxAge, 0...2_592_000, "seconds")
        for (gateway, offset) in receiverOffsets.sorted(by: { $0.key < $1.key })
        where !(offset.isFinite && abs(offset) <= 40) {
            issues.append(
                ConfigIssue(
                    path: "\(path).receiver_offsets_db.\(gateway)", message: "must be -40...40 dB, got \(offset)"))
        }
        issues += classifier.validate(path: path)
        return issues
    }
}
