/// Turns a (smoothed) RSSI into metres. Implemented by the decoding core's distance models (ABL curve fit,
/// log-distance path loss); consumed by the tracker, which stays independent of the model chosen.
public protocol DistanceEstimating: Sendable {
    /// - Parameters:
    ///   - rssi: smoothed RSSI in dBm.
    ///   - measuredPower: the beacon's measured power at 1 m in dBm, nil to use the format's default.
    ///   - format: the beacon's format name (selects a per-format default measured power).
    /// - Returns: metres, or nil when no estimate is possible.
    func distance(rssi: Double, measuredPower: Int?, format: String) -> Double?
}
