import BeaconConfigReading

/// The `outbox` section: the SQLite database that buffers events while the broker is unreachable (and keeps
/// the region state and the sequence counter). Every key is documented in docs/outbox.md.
public struct OutboxSettings: Sendable, Equatable {
    /// `outbox.path`: database file.
    public var path: String
    /// `outbox.max_rows`: hard cap on stored events.
    public var maxRows: Int
    /// `outbox.max_bytes`: hard cap on stored payload bytes.
    public var maxBytes: Int
    /// `outbox.sighting_max_age_s`: sightings, ESPresense and telemetry rows older than this (capture time)
    /// are dropped instead of being replayed.
    public var sightingMaxAge: Double
    /// `outbox.batch_size`: rows read per drain step and deleted per transaction.
    public var batchSize: Int
    /// `outbox.memory_max_rows`: cap of the in-memory queue used when the database is unusable.
    public var memoryMaxRows: Int
    /// `outbox.synchronous`: SQLite `synchronous` pragma, `normal` (survives a process crash) or `full`
    /// (also survives power loss, slower).
    public var synchronous: String

    public init(
        path: String = "/var/lib/beaconbridge/outbox.sqlite", maxRows: Int = 1_000_000,
        maxBytes: Int = 256 * 1024 * 1024, sightingMaxAge: Double = 60, batchSize: Int = 500,
        memoryMaxRows: Int = 20_000, synchronous: String = "normal"
    ) {
        self.path = path
        self.maxRows = maxRows
        self.maxBytes = maxBytes
        self.sightingMaxAge = sightingMaxAge
        self.batchSize = batchSize
        self.memoryMaxRows = memoryMaxRows
        self.synchronous = synchronous
    }

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if path.isEmpty { issues.append(ConfigIssue(path: "outbox.path", message: "must not be empty")) }
        if maxRows < 1 { issues.append(ConfigIssue(path: "outbox.max_rows", message: "must be at least 1")) }
        if maxBytes < 1024 {
            issues.append(ConfigIssue(path: "outbox.max_bytes", message: "must be at least 1024"))
        }
        if !(sightingMaxAge >= 0) {
            issues.append(ConfigIssue(path: "outbox.sighting_max_age_s", message: "must be zero or more"))
        }
        if !(1...10_000).contains(batchSize) {
            issues.append(ConfigIssue(path: "outbox.batch_size", message: "must be between 1 and 10000"))
        }
        if memoryMaxRows < 1 {
            issues.append(ConfigIssue(path: "outbox.memory_max_rows", message: "must be at least 1"))
        }
        if !["normal", "full"].contains(synchronous) {
            issues.append(ConfigIssue(path: "outbox.synchronous", message: "must be normal or full"))
        }
        return issues
    }
}
