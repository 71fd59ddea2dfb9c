import BeaconModel

/// A threshold on a beacon's signal: RSSI above/below a level, or distance below/above a radius.
/// Enter conditions use the `rssiAbove` / `distanceBelow` sense, exit conditions the opposite sense: a
/// beacon keeps qualifying for "inside" while it is above the exit RSSI / nearer than the exit distance.
public enum RegionCondition: Sendable, Equatable, Hashable {
    /// dBm.
    case rssi(Double)
    /// Metres.
    case distance(Double)

    /// The default exit condition derived from an enter condition: 5 dB lower, or 1.5 times the radius
    /// (about 4.7 dB with a path-loss exponent of 2.7, so both kinds get the same hysteresis in signal terms).
    public var defaultExit: RegionCondition {
        switch self {
        case let .rssi(level): .rssi(level - 5)
        case let .distance(metres): .distance(metres * 1.5)
        }
    }

    /// The RSSI (dBm) at which the condition flips for a beacon of this format and measured power: the level
    /// itself, or the distance model inverted (`RegionEvaluator.rssiLevel`). Nil when the model gives no estimate.
    public func rssiLevel(estimator: any DistanceEstimating, format: String, measuredPower: Int?) -> Double? {
        switch self {
        case let .rssi(level): level
        case let .distance(metres):
            RegionEvaluator.rssiLevel(
                forDistance: metres, estimator: estimator, measuredPower: measuredPower, format: format)
        }
    }
}
