import BeaconConfigReading
import BeaconFormats

/// What `run` and `replay` were asked to do on the command line (everything else is in the config file).
struct DaemonOptions: Equatable {
    var config: ConfigLocation
    /// Replay this btsnoop capture instead of the configured source.
    var replayPath: String?
    /// Replay speed: 0 as fast as possible, 1 real time (default for `replay`: 0).
    var replaySpeed: Double?
    /// Longest pause of a paced replay, in real seconds (`--max-gap`, overrides `scanner.replay_max_gap_s`).
    var replayMaxGap: Double?
    /// Overrides `logging.level`.
    var logLevel: String?
    /// Record raw HCI traffic to this btsnoop file (overrides `scanner.record`).
    var recordPath: String?
    /// Save region state to and restore it from this SQLite database (`--state-db`); with a replay source it is
    /// the only way region state persists (restored at the first replayed event's capture time).
    var stateDatabasePath: String?
    /// `run --hci-feed FD`: read H4 event packets from this inherited, connected `SOCK_SEQPACKET` socket
    /// instead of the adapter (the live-mode bench and tests, where a socket pair stands in for a controller).
    var hciFeedDescriptor: Int32?
    /// `replay --teach REGION:DEVICE:AT:START-END`: teaches over windows of the capture (Daemon+Teaching).
    var teaches: [ScheduledTeach] = []

    /// True when events come from a capture (the command line or `scanner.source: replay:FILE`), not an adapter.
    func isReplay(_ scanner: ScannerSettings) -> Bool { replayPath != nil || scanner.source != .hci }

    /// Parses `[--config FILE] [--speed X] [--max-gap S] [--log-level L] [--record FILE] [--state-db FILE] [CAPTURE]`; the capture is required
    /// for `replay` and refused for `run`.
    static func parse(_ arguments: [String], replay: Bool, environment: [String: String]) -> Result<
        DaemonOptions, UsageError
    > {
        var rest = arguments
        let location: ConfigLocation
        switch ConfigLocation.extract(from: &rest, environment: environment) {
        case let .success(found): location = found
        case let .failure(error): return .failure(error)
        }
        var options = DaemonOptions(config: location)
        var index = 0
        while index < rest.count {
            let argument = rest[index]
            let next: String? = index + 1 < rest.count ? rest[index + 1] : nil
            switch argument {
            case "--help", "-h":
                return .failure(UsageError(""))
            case "--hci-feed":
                guard !replay else { return .failure(UsageError("--hci-feed is for run")) }
                guard let next, let descriptor = Int32(next), descriptor >= 0 else {
                    return .failure(UsageError("--hci-feed needs an open file descriptor number"))
                }
                index += 1
                options.hciFeedDescriptor = descriptor
            case "--teach":
                guard replay else { return .failure(UsageError("--teach is for replay")) }
                guard let next else { return .failure(UsageError("--teach needs REGION:DEVICE:AT:START-END")) }
                index += 1
                switch ScheduledTeach.parse(next) {
                case let .success(teach): options.teaches.append(teach)
                case let .failure(error): return .failure(error)
                }
            case "--log-level", "--record", "--speed", "--state-db", "--max-gap":
                guard let next else { return .failure(UsageError("\(argument) needs a value")) }
                index += 1
                if argument == "--state-db" { options.stateDatabasePath = next }
                if argument == "--log-level" { options.logLevel = next }
                if argument == "--record" { options.recordPath = next }
                if argument == "--speed" {
                    guard replay else { return .failure(UsageError("--speed is for replay")) }
                    guard let speed = Double(next), speed.isFinite, speed >= 0 else {
                        return .failure(
                            UsageError("--speed needs a number >= 0 (0: as fast as possible, 1: real time)"))
                    }
                    options.replaySpeed = speed
                }
                if argument == "--max-gap" {
                    guard replay else { return .failure(UsageError("--max-gap is for replay")) }
                    guard let gap = ConfigDuration.parse(next), gap > 0, gap.isFinite else {
                        return .failure(UsageError("--max-gap needs a duration > 0 (seconds, or e.g. 500ms, 2s)"))
                    }
                    options.replayMaxGap = gap
                }
            default:
                guard replay, !argument.hasPrefix("-"), options.replayPath == nil else {
                    return .failure(UsageError("unexpected argument '\(argument)'"))
                }
                options.replayPath = argument
            }
            index += 1
        }
        if replay, options.replayPath == nil { return .failure(UsageError("replay needs a btsnoop capture file")) }
        return .success(options)
    }
}
