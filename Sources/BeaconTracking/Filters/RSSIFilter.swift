import BeaconModel

/// The compact per-beacon state of the filter chosen by `FilterSettings` (the settings themselves are passed
/// to `add`, not stored per beacon). Window filters allocate their sample ring on the first report only.
public enum RSSIFilter: Sendable {
    /// Kalman state; `estimate` is NaN before the first report.
    case kalman(estimate: Double, covariance: Double)
    /// Running-average or median-IQR samples.
    case window(RSSISampleRing)

    public init(_ settings: FilterSettings) {
        switch settings.kind {
        case .kalman: self = .kalman(estimate: .nan, covariance: 0)
        case .runningAverage, .medianIQR: self = .window(RSSISampleRing(capacity: settings.maxSamples))
        }
    }

    /// Adds one report (RSSI in dBm, never the "not available" marker); returns the smoothed RSSI.
    /// `settings` must be the ones this state was made for.
    public mutating func add(_ rssi: Int, at time: Timestamp, settings: FilterSettings) -> Double {
        switch self {
        case let .kalman(estimate, covariance):
            var state: Double? = estimate.isNaN ? nil : estimate
            var variance = covariance
            let value = KalmanRSSIFilter.step(
                &state, covariance: &variance, rssi: Double(rssi),
                processNoise: settings.processNoise,
                measurementNoise: settings.measurementNoise)
            self = .kalman(estimate: value, covariance: variance)
            return value
        case var .window(ring):
            self = .kalman(estimate: .nan, covariance: 0)  // drop this reference so `ring` is uniquely owned
            ring.append(rssi: rssi, at: time)
            ring.removeOlder(than: time - settings.window)
            let value: Double
            if settings.kind == .medianIQR {
                let k = settings.fenceK
                value = ring.withSortedRSSI { MedianIQRRSSIFilter.fencedMean($0, k: k) }
            } else {
                value = ring.withSortedRSSI(RunningAverageRSSIFilter.trimmedMean)
            }
            self = .window(ring)
            return value
        }
    }
}
