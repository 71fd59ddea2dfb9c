/// The `telemetry:` section: the periodic gateway health message (reports/s, drops, backlog, restarts,
/// memory) published to MQTT.
public struct TelemetrySettings: Sendable, Equatable {
    public var enabled: Bool
    /// Seconds between two telemetry messages.
    public var interval: Double

    public init(enabled: Bool = true, interval: Double = 60) {
        self.enabled = enabled
        self.interval = interval
    }
}
