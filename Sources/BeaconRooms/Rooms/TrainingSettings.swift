import BeaconConfigReading
import BeaconModel

/// `rooms.training`: what Home Assistant's "Train <room>" buttons send (docs/rooms.md, "Training, step by step").
/// Training itself needs no key (the `rooms train` command and the MQTT command name the device); without
/// `device` the leader announces no buttons.
public struct TrainingSettings: Sendable, Equatable {
    /// `rooms.training.device`: the beacon id a button's training records (a phone or tag a person carries).
    public var device: String?
    /// `rooms.training.seconds`: how long a button's training walk lasts.
    public var seconds: Double = RoomCommand.defaultSeconds

    public init() {}

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if let device, !CommandEnvelope.isPrintable(device, max: 256) {
            issues.append(
                ConfigIssue(
                    path: "rooms.training.device", message: "must be a beacon id of 1-256 printable characters"))
        }
        if !(seconds.isFinite && RoomCommand.secondsRange.contains(seconds)) {
            issues.append(
                ConfigIssue(path: "rooms.training.seconds", message: "must be 1...600 seconds, got \(seconds)"))
        }
        return issues
    }
}

extension TrainingSettings {
    /// The `rooms.training:` section. Ranges are `validate()`'s.
    public init(from r: inout ConfigReader) {
        self.init()
        device = r.string("device")
        seconds = r.duration("seconds", default: seconds)
    }
}
