import BeaconModel

/// Gateway status and counters, published as a `telemetry` event (docs/schemas/telemetry.schema.json).
/// The daemon gathers it (publisher counters, outbox backlog, scanner figures) at `time` and passes it in.
public struct GatewayTelemetry: Sendable, Equatable {
    /// When the figures were taken (seconds since the Unix epoch).
    public var time: Timestamp
    /// `running` in normal operation; free text otherwise (e.g. `degraded`).
    public var status: String
    /// Seconds since the gateway started.
    public var uptime: Double
    /// Counter name (snake_case) to value, in the order they should appear.
    public var counters: [(String, Int64)]

    public init(time: Timestamp, status: String = "running", uptime: Double, counters: [(String, Int64)]) {
        self.time = time
        self.status = status
        self.uptime = uptime
        self.counters = counters
    }

    public static func == (lhs: GatewayTelemetry, rhs: GatewayTelemetry) -> Bool {
        lhs.time == rhs.time && lhs.status == rhs.status && lhs.uptime == rhs.uptime
            && lhs.counters.count == rhs.counters.count
            && zip(lhs.counters, rhs.counters).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}
