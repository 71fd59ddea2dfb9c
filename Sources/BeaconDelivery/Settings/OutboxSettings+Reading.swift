import BeaconConfigReading

extension OutboxSettings {
    /// The `outbox:` section. Ranges are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        path = r.string("path", default: path)
        maxRows = r.value("max_rows", default: maxRows)
        maxBytes = r.value("max_bytes", as: ConfigByteSize.self)?.bytes ?? maxBytes
        sightingMaxAge = r.duration("sighting_max_age_s", default: sightingMaxAge)
        batchSize = r.value("batch_size", default: batchSize)
        memoryMaxRows = r.value("memory_max_rows", default: memoryMaxRows)
        synchronous = r.oneOf("synchronous", ["normal", "full"], default: synchronous)
    }
}
