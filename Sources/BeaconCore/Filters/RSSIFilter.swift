/// The filter a beacon (or a region's view of a beacon) runs, chosen by `FilterSettings`.
/// Window filters allocate their sample ring on the first report only.
public enum RSSIFilter: Sendable {
    case kalman(KalmanRSSIFilter)
    case runningAverage(RunningAverageRSSIFilter)
    case medianIQR(MedianIQRRSSIFilter)

    public init(_ settings: FilterSettings) {
        switch settings.kind {
        case .kalman:
            self = .kalman(KalmanRSSIFilter(processNoise: settings.processNoise,
                                            measurementNoise: settings.measurementNoise))
        case .runningAverage:
            self = .runningAverage(RunningAverageRSSIFilter(window: settings.window, maxSamples: settings.maxSamples))
        case .medianIQR:
            self = .medianIQR(MedianIQRRSSIFilter(window: settings.window, fenceK: settings.fenceK,
                                                  maxSamples: settings.maxSamples))
        }
    }

    /// Adds one report (RSSI in dBm, never the "not available" marker); returns the smoothed RSSI.
    public mutating func add(_ rssi: Int, at time: Timestamp) -> Double {
        switch self {
        case var .kalman(filter):
            let value = filter.add(Double(rssi))
            self = .kalman(filter)
            return value
        case var .runningAverage(filter):
            self = .kalman(KalmanRSSIFilter()) // release the ring's reference so `filter` stays unique
            let value = filter.add(rssi, at: time)
            self = .runningAverage(filter)
            return value
        case var .medianIQR(filter):
            self = .kalman(KalmanRSSIFilter())
            let value = filter.add(rssi, at: time)
            self = .medianIQR(filter)
            return value
        }
    }
}
