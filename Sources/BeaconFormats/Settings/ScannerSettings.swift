import BeaconConfigReading

/// The `scanner:` section of the configuration: which adapter, how to scan, supervision, record and replay.
/// Every key, type and default is listed in docs/scanner.md.
public struct ScannerSettings: Sendable, Equatable {
    /// Where events come from.
    public enum Source: Sendable, Equatable {
        /// The live adapter named by `adapter`.
        case hci
        /// A btsnoop capture file, replayed with timestamps from the capture.
        case replay(path: String)

        /// Parses `hci` or `replay:FILE`; nil otherwise.
        public init?(configValue: String) {
            if configValue == "hci" {
                self = .hci
                return
            }
            let prefix = "replay:"
            guard configValue.hasPrefix(prefix) else { return nil }
            let path = String(configValue.dropFirst(prefix.count))
            guard !path.isEmpty else { return nil }
            self = .replay(path: path)
        }

        public var configValue: String {
            switch self {
            case .hci: "hci"
            case let .replay(path): "replay:\(path)"
            }
        }
    }

    /// Whether to use LE extended scanning commands.
    public enum ExtendedScanning: String, Sendable, Equatable, CaseIterable {
        /// Extended when the controller supports it, legacy otherwise.
        case auto
        /// Extended; starting fails when the controller does not support it.
        case on
        /// Legacy LE Set Scan Parameters / Enable always.
        case off
    }

    /// `hci0`, an adapter index (`0`), or a controller address (`AA:BB:CC:DD:EE:FF`).
    public var adapter: String = "hci0"
    /// Active scanning (scan requests, scan responses) or passive.
    public var active: Bool = true
    public var intervalMilliseconds: Double = 100
    public var windowMilliseconds: Double = 100
    public var extended: ExtendedScanning = .auto
    /// Capacity of the queue between the reading thread and the pipeline; overload drops the oldest.
    public var queueCapacity: Int = 1024
    /// After handing a batch over, the reading thread lets reports gather in the kernel for the rest of this
    /// window before it reads again (`scanner.batch_window_ms`): at most 1000 / window wake-ups a second of the
    /// reading thread and the loop, whatever the report rate; a report waits at most this long. 0: no pause.
    public var batchWindowMilliseconds: Double = ScannerSettings.defaultBatchWindowMilliseconds
    public static let defaultBatchWindowMilliseconds: Double = 25
    /// The longest window (`scanner.batch_window_max_ms`): at low report rates the window grows toward this so a
    /// wake-up carries more reports (`BatchWindow`); a report then waits at most this long before it is read.
    /// nil: `defaultBatchWindowMaxMilliseconds`, or `batch_window_ms` (no growth) with the ESPHome proxy on
    /// (`effectiveBatchWindow(esphomeProxy:)`). Below `batch_window_ms` it is `batch_window_ms`.
    public var batchWindowMaxMilliseconds: Double? = nil
    public static let defaultBatchWindowMaxMilliseconds: Double = 100

    /// The reading thread's window bounds in seconds. With the ESPHome proxy on, the window does not grow unless
    /// `batch_window_max_ms` is set: Home Assistant gets its reports through the proxy, whose own batching adds
    /// to this wait (docs/scanner.md).
    public func effectiveBatchWindow(esphomeProxy: Bool) -> BatchWindow {
        let maximum =
            batchWindowMaxMilliseconds
            ?? (esphomeProxy ? batchWindowMilliseconds : Self.defaultBatchWindowMaxMilliseconds)
        return BatchWindow(minimum: batchWindowMilliseconds / 1000, maximum: maximum / 1000)
    }
    /// Restart scanning when no advertising report arrived for this long while scanning; 0 disables.
    public var stallTimeoutSeconds: Double = 60
    /// Write the raw HCI traffic to this btsnoop file.
    public var record: String? = nil
    public var source: Source = .hci
    /// Replay speed factor: 1 real time, 10 ten times faster, 0 as fast as possible.
    public var replaySpeed: Double = 0
    /// A paced replay waits at most this many real seconds between two events, however far apart their
    /// capture timestamps are (`scanner.replay_max_gap_s`).
    public var replayMaxGap: Double = ScannerSettings.defaultReplayMaxGap
    public static let defaultReplayMaxGap: Double = 5

    public init() {}

    /// The adapter as a parsed selector, nil when `adapter` is malformed.
    public var adapterSelector: AdapterSelector? { AdapterSelector(configValue: adapter) }

    /// The scan parameters in controller units; nil when interval or window is invalid (see `validate`).
    public var scanParameters: ScanParameters? {
        guard let interval = ScanParameters.units(milliseconds: intervalMilliseconds),
            let window = ScanParameters.units(milliseconds: windowMilliseconds), window <= interval
        else {
            return nil
        }
        return ScanParameters(active: active, intervalUnits: interval, windowUnits: window)
    }

    /// Every problem at once; `path` prefixes key names (e.g. "scanner").
    public func validate(path: String = "scanner") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func issue(_ key: String, _ message: String) {
            issues.append(ConfigIssue(path: path.isEmpty ? key : "\(path).\(key)", message: message))
        }
        if AdapterSelector(configValue: adapter) == nil {
            issue("adapter", "'\(adapter)' is not an adapter name (hci0), index (0) or address (AA:BB:CC:DD:EE:FF)")
        }
        let interval = ScanParameters.units(milliseconds: intervalMilliseconds)
        let window = ScanParameters.units(milliseconds: windowMilliseconds)
        if interval == nil { issue("interval_ms", "must be between 2.5 and 10240 ms, got \(intervalMilliseconds)") }
        if window == nil { issue("window_ms", "must be between 2.5 and 10240 ms, got \(windowMilliseconds)") }
        if let interval, let window, window > interval {
            issue("window_ms", "must not exceed interval_ms (\(windowMilliseconds) > \(intervalMilliseconds))")
        }
        if queueCapacity < 1 || queueCapacity > 1_000_000 {
            issue("queue_capacity", "must be between 1 and 1000000, got \(queueCapacity)")
        }
        if !batchWindowMilliseconds.isFinite || batchWindowMilliseconds < 0 || batchWindowMilliseconds > 1000 {
            issue("batch_window_ms", "must be between 0 and 1000 ms, got \(batchWindowMilliseconds)")
        }
        if let maximum = batchWindowMaxMilliseconds, !maximum.isFinite || maximum < 0 || maximum > 1000 {
            issue("batch_window_max_ms", "must be between 0 and 1000 ms, got \(maximum)")
        }
        if !stallTimeoutSeconds.isFinite || stallTimeoutSeconds < 0 || stallTimeoutSeconds > 86_400 {
            issue("stall_timeout_s", "must be between 0 (off) and 86400 seconds, got \(stallTimeoutSeconds)")
        } else if stallTimeoutSeconds > 0 && stallTimeoutSeconds < 2 {
            issue("stall_timeout_s", "must be 0 (off) or at least 2 seconds, got \(stallTimeoutSeconds)")
        }
        if let record, record.isEmpty { issue("record", "must be a file path when set") }
        if !(replayMaxGap > 0) || !replayMaxGap.isFinite {
            issue("replay_max_gap_s", "must be a duration greater than 0")
        }
        if !replaySpeed.isFinite || replaySpeed < 0 || replaySpeed > 1_000_000 {
            issue("replay_speed", "must be 0 (as fast as possible) or a positive factor, got \(replaySpeed)")
        }
        return issues
    }
}
