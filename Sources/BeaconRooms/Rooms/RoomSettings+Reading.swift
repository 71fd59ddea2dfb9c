import BeaconConfigReading

extension RoomSettings {
    /// The `rooms:` section. Ranges are `validate(gateway:)`'s (reported by the caller, which knows the gateway).
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.bool("enabled", default: enabled)
        var rooms: [String: String] = [:]
        for (id, room) in r.namedValues("gateways", of: String.self) { rooms[id] = room }
        gateways = rooms
        roomsWithoutGateway = r.list("rooms_without_gateway", of: String.self)
        arbiter.read(from: &r)
        leaderSettle = r.duration("leader_settle_s", default: leaderSettle)
        replayWaitForGateways = r.value("replay_wait_for_gateways", default: replayWaitForGateways)
        calibration = r.section("calibration") { CalibrationSettings(from: &$0) }
        var tags: [String: String] = [:]
        for (beacon, room) in r.namedValues("reference_tags", of: String.self) { tags[beacon] = room }
        referenceTags = tags
        training = r.section("training") { TrainingSettings(from: &$0) }
        zones = r.list("zones") { RoomZone(from: &$0) }
    }
}

extension RoomArbiterSettings {
    /// The rule's keys, over the current values: read from the `rooms:` section and from a rooms scenario's
    /// `arbiter` block (docs/scenarios.md), so both spell, type-check and default them in one place.
    /// `receiver_offsets_db`, when given, replaces the offsets (gateways not named get none).
    public mutating func read(from r: inout ConfigReader) {
        if r.has("receiver_offsets_db") {
            var offsets: [String: Double] = [:]
            for (id, offset) in r.namedValues("receiver_offsets_db", of: Double.self) { offsets[id] = offset }
            receiverOffsets = offsets
        }
        margin = r.value("margin_db", default: margin)
        dwell = r.duration("dwell_s", default: dwell)
        smoothingTime = r.duration("smoothing_s", default: smoothingTime)
        medianWindow = r.duration("median_window_s", default: medianWindow)
        rise = r.value("rise_db", default: rise)
        slowMargin = r.value("slow_margin_db", default: slowMargin)
        slowDwell = r.duration("slow_dwell_s", default: slowDwell)
        staleAfter = r.duration("stale_after_s", default: staleAfter)
        staleDecay = r.value("stale_decay_db_per_s", default: staleDecay)
        evidenceMaxAge = r.duration("evidence_max_age_s", default: evidenceMaxAge)
        awayTimeout = r.duration("away_timeout_s", default: awayTimeout)
        settleTime = r.duration("settle_s", default: settleTime)
        restoreMaxAge = r.duration("restore_max_age_s", default: restoreMaxAge)
        classifier.read(from: &r)
        if r.has("signal") {
            let signal = r.string("signal", default: "raw")
            switch signal {
            case "raw": useRawRSSI = true
            case "smoothed": useRawRSSI = false
            default: r.issue("must be `raw` or `smoothed`, got `\(signal)`", key: "signal")
            }
        }
    }
}
