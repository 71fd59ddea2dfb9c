import BeaconModel

/// One teach running on this gateway (`RegionEngine.startTeach`): the device's reports from `start` to `end`
/// (capture time, so a replay's teach does not depend on its speed) in a `LevelRecorder`.
public struct TeachRecording: Sendable, Equatable {
    public var id: String?
    /// The region taught, nil for `at: 1m` (the device's reference power).
    public var region: String?
    public var device: String
    public var spot: TeachSpot
    public var start: Timestamp
    public var end: Timestamp
    public private(set) var recorder = LevelRecorder()
    /// The capture time of the last progress handed out.
    var lastProgress: Timestamp

    public init(id: String?, region: String?, device: String, spot: TeachSpot, start: Timestamp, seconds: Double) {
        self.id = id
        self.region = region
        self.device = device
        self.spot = spot
        self.start = start
        self.end = start + seconds
        lastProgress = start
    }

    public var seconds: Double { end - start }
    public var reports: Int { recorder.count }
    public func secondsLeft(at time: Timestamp) -> Double { max(0, end - time) }

    /// What it heard, nil when nothing.
    public var level: TaughtLevel? { recorder.summary }
    /// Its quality (`TeachQuality`): what more is needed.
    public var quality: TeachQuality { TeachQuality(spot: spot, level: level) }

    public static func == (lhs: TeachRecording, rhs: TeachRecording) -> Bool {
        lhs.id == rhs.id && lhs.region == rhs.region && lhs.device == rhs.device && lhs.spot == rhs.spot
            && lhs.start == rhs.start && lhs.end == rhs.end && lhs.recorder.count == rhs.recorder.count
    }

    mutating func record(rssi: Int, at time: Timestamp) {
        guard time >= start, time < end else { return }
        recorder.add(rssi: rssi, at: time)
    }
}

/// What a running teach has to say (`RegionEngine.advanceTeaches`).
public enum TeachUpdate: Sendable, Equatable {
    /// Every `RegionEngine.teachProgressInterval` seconds of capture time while it records.
    case progress(TeachRecording, at: Timestamp)
    /// Its window ended.
    case done(TeachRecording)
}
