import BeaconModel

/// The simulator's distance model, the log-distance path-loss law d = 10^((P₁ₘ - rssi) / (10·n)): the same law
/// the simulator draws RSSI from, so a region's distance threshold maps exactly to an RSSI level. Used by the
/// simulator and tests; the gateway's real models live with the decoding core.
public struct SimulationDistance: DistanceEstimating {
    public var pathLossExponent: Double
    /// Measured power at 1 m used when a beacon transmits none.
    public var defaultMeasuredPower: Int

    public init(pathLossExponent: Double = 2.7, defaultMeasuredPower: Int = -59) {
        self.pathLossExponent = pathLossExponent
        self.defaultMeasuredPower = defaultMeasuredPower
    }

    public func distance(rssi: Double, measuredPower: Int?, format: String) -> Double? {
        guard rssi.isFinite, pathLossExponent > 0 else { return nil }
        let power = Double(measuredPower ?? defaultMeasuredPower)
        return ElementaryMath.pow10((power - rssi) / (10 * pathLossExponent))
    }

    /// Mean RSSI at `metres` (the inverse).
    public func meanRSSI(atDistance metres: Double, measuredPower: Int?) -> Double {
        Double(measuredPower ?? defaultMeasuredPower) - 10 * pathLossExponent * ElementaryMath.log10(max(metres, 0.01))
    }
}
