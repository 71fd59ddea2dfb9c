/// A one-dimensional Kalman filter on RSSI with a random-walk model, in floating point throughout
/// (room-assistant's defaults: process noise 0.008, measurement noise 4). With those values the gain settles at
/// about 0.044 per report: an exponential average over ~23 reports.
public struct KalmanRSSIFilter: Sendable, Equatable {
    public var processNoise: Double
    public var measurementNoise: Double
    public private(set) var estimate: Double?
    private var covariance: Double = 0

    public init(processNoise: Double = 0.008, measurementNoise: Double = 4) {
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
    }

    /// Adds one report; returns the new estimate.
    @discardableResult
    public mutating func add(_ rssi: Double) -> Double {
        Self.step(
            &estimate, covariance: &covariance, rssi: rssi, processNoise: processNoise,
            measurementNoise: measurementNoise)
    }

    /// One predict/update step on a bare state (shared with `RSSIFilter`).
    package static func step(
        _ estimate: inout Double?, covariance: inout Double, rssi: Double, processNoise: Double,
        measurementNoise: Double
    ) -> Double {
        guard let previous = estimate else {
            estimate = rssi
            covariance = measurementNoise
            return rssi
        }
        let prior = covariance + processNoise
        let gain = prior / (prior + measurementNoise)
        let next = previous + gain * (rssi - previous)
        covariance = (1 - gain) * prior
        estimate = next
        return next
    }

    public mutating func reset() {
        estimate = nil
        covariance = 0
    }
}
