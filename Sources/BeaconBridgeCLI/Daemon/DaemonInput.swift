import BeaconCore

/// Everything the daemon's single loop reacts to, merged into one stream so one task owns the pipeline.
enum DaemonInput: Sendable {
    /// An HCI event from the source.
    case hci(CapturedHCIEvent)
    /// The source's stream finished (end of a replay, or a failure it could not recover from).
    case sourceEnded
    /// Once a second: timeouts, state persistence, telemetry.
    case tick
    /// Publish a region `state` snapshot (after a (re)connect or Home Assistant coming online).
    case snapshot(String)
    /// SIGHUP: reload formats and regions.
    case reload
    /// SIGTERM / SIGINT.
    case stop(Int32)
}
