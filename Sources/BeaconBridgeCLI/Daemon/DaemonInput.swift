import BeaconModel
import BeaconRuntime

/// The controls the daemon's loop reacts to besides HCI event batches (which come through the same
/// mailbox, `EventMailbox`), so one task owns the pipeline.
enum DaemonInput: Sendable {
    /// Once a second: timeouts, state persistence, telemetry.
    case tick
    /// Publish a region `state` snapshot (after a (re)connect or Home Assistant coming online).
    case snapshot(String)
    /// SIGHUP: reload formats and regions.
    case reload
    /// Inbound messages for the room arbiter are waiting (`rooms`, Daemon+Rooms).
    case rooms
    /// Regions commands or taught records are waiting (Daemon+Teaching).
    case teaching
    /// A rooms command from the status page (`POST /actions/rooms/<verb>`, Daemon+Status): the verb and the JSON
    /// body, as the MQTT command would carry them (`RoomCommand.parse` judges both).
    case roomCommand(verb: String, payload: [UInt8])
    /// A regions command from the status page (`POST /actions/regions/<verb>`): run on this gateway as the MQTT
    /// command `<prefix>/regions/command/<verb>` would be (`TeachCommand.parse` judges it again).
    case regionCommand(verb: String, payload: [UInt8])
    /// The service group stops (SIGTERM / SIGINT, or another service ended).
    case stop(ServiceGroup.Reason)
}
