import BeaconModel
import BeaconTracking

/// The simple region rules peer gateways use, run by the simulator beside the engine on the same report stream
/// with the same levels: an RSSI filter (or none), then enter when the filtered RSSI rises above the enter
/// level and exit once it has not been at or above the exit level for the exit timeout (the region's exit
/// period, 30 s by default; also after that long without any report).
public struct BaselineDetector: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Each report's RSSI against the levels.
        case rawThreshold = "raw-threshold"
        /// ESPresense: mean inside the Tukey fence (k = 1.5) over 15 s.
        case medianIQR = "median-iqr-15s"
        /// Android Beacon Library: 20 s running average trimmed 10 % at each end.
        case runningAverage = "running-average-20s"
        /// room-assistant: 1-D Kalman, process noise 0.008, measurement noise 4.
        case kalman = "kalman"

        /// The filter settings (window filters hold up to 1024 samples, 100 s at 10 Hz, so the window binds).
        var filter: FilterSettings? {
            switch self {
            case .rawThreshold: nil
            case .medianIQR: FilterSettings(kind: .medianIQR, window: 15, maxSamples: 1_024, fenceK: 1.5)
            case .runningAverage: FilterSettings(kind: .runningAverage, window: 20, maxSamples: 1_024)
            case .kalman: FilterSettings(kind: .kalman, processNoise: 0.008, measurementNoise: 4)
            }
        }
    }

    public let kind: Kind
    let settings: FilterSettings?
    var filter: RSSIFilter?
    let enterLevel: Double
    let exitLevel: Double
    let exitTimeout: Double
    public private(set) var state = RegionState.unknown
    var lastAbove = -Double.infinity

    public init(kind: Kind, enterLevel: Double, exitLevel: Double, exitTimeout: Double) {
        self.kind = kind
        settings = kind.filter
        filter = settings.map(RSSIFilter.init)
        self.enterLevel = enterLevel
        self.exitLevel = exitLevel
        self.exitTimeout = exitTimeout
    }

    /// One report; returns the transition it causes (an overdue exit first, when `advance` was late).
    public mutating func observe(rssi: Int, at time: Timestamp) -> [TruthTransition.Kind] {
        var result = advance(to: time).map { [$0] } ?? []
        var value = Double(rssi)
        if let settings, var current = filter {
            value = current.add(rssi, at: time, settings: settings)
            filter = current
        }
        if value >= exitLevel { lastAbove = time }
        if state != .inside, value > enterLevel {
            state = .inside
            lastAbove = time
            result.append(.enter)
        } else if state == .unknown {
            state = .outside
        }
        return result
    }

    /// Fires the exit timeout.
    public mutating func advance(to time: Timestamp) -> TruthTransition.Kind? {
        guard state == .inside, time - lastAbove >= exitTimeout else { return nil }
        state = .outside
        return .exit
    }
}
