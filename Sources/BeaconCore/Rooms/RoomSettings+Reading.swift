extension RoomSettings {
    /// The `rooms:` section. Ranges are `validate(gateway:)`'s (reported by the caller, which knows the gateway).
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.bool("enabled", default: enabled)
        var rooms: [String: String] = [:]
        for (id, room) in r.namedValues("gateways", of: String.self) { rooms[id] = room }
        gateways = rooms
        var offsets: [String: Double] = [:]
        for (id, offset) in r.namedValues("receiver_offsets_db", of: Double.self) { offsets[id] = offset }
        arbiter.receiverOffsets = offsets
        arbiter.margin = r.value("margin_db", default: arbiter.margin)
        arbiter.dwell = r.duration("dwell_s", default: arbiter.dwell)
        arbiter.smoothingTime = r.duration("smoothing_s", default: arbiter.smoothingTime)
        arbiter.medianWindow = r.duration("median_window_s", default: arbiter.medianWindow)
        arbiter.rise = r.value("rise_db", default: arbiter.rise)
        arbiter.slowMargin = r.value("slow_margin_db", default: arbiter.slowMargin)
        arbiter.slowDwell = r.duration("slow_dwell_s", default: arbiter.slowDwell)
        arbiter.staleAfter = r.duration("stale_after_s", default: arbiter.staleAfter)
        arbiter.staleDecay = r.value("stale_decay_db_per_s", default: arbiter.staleDecay)
        arbiter.evidenceMaxAge = r.duration("evidence_max_age_s", default: arbiter.evidenceMaxAge)
        arbiter.awayTimeout = r.duration("away_timeout_s", default: arbiter.awayTimeout)
        arbiter.settleTime = r.duration("settle_s", default: arbiter.settleTime)
        arbiter.restoreMaxAge = r.duration("restore_max_age_s", default: arbiter.restoreMaxAge)
        if r.has("signal") {
            let signal = r.string("signal", default: "raw")
            switch signal {
            case "raw": arbiter.useRawRSSI = true
            case "smoothed": arbiter.useRawRSSI = false
            default: r.issue("must be `raw` or `smoothed`, got `\(signal)`", key: "signal")
            }
        }
        leaderSettle = r.duration("leader_settle_s", default: leaderSettle)
        replayWaitForGateways = r.value("replay_wait_for_gateways", default: replayWaitForGateways)
        calibration = r.section("calibration") { CalibrationSettings(from: &$0) }
    }
}
