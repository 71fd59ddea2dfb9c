import BeaconConfigReading

extension ScannerSettings {
    /// The `scanner:` section. Ranges and cross-checks are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        adapter = r.string("adapter", default: adapter)
        active = r.bool("active", default: active)
        intervalMilliseconds = r.value("interval_ms", default: intervalMilliseconds)
        windowMilliseconds = r.value("window_ms", default: windowMilliseconds)
        extended = r.choice("extended", default: extended)
        queueCapacity = r.value("queue_capacity", default: queueCapacity)
        batchWindowMilliseconds = r.value("batch_window_ms", default: batchWindowMilliseconds)
        batchWindowMaxMilliseconds = r.value("batch_window_max_ms", as: Double.self)
        stallTimeoutSeconds = r.duration("stall_timeout_s", default: stallTimeoutSeconds)
        record = r.string("record")
        source = r.value("source", expecting: "`hci` or `replay:FILE`", Source.init(configValue:)) ?? source
        replaySpeed = r.value("replay_speed", default: replaySpeed)
        replayMaxGap = r.duration("replay_max_gap_s", default: replayMaxGap)
    }
}
