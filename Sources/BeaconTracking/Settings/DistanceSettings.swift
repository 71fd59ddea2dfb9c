import BeaconConfigReading

/// Distance estimation settings (YAML section `distance`, see docs/decoding.md).
public struct DistanceSettings: Sendable, Equatable {
    /// `distance.model`: `abl` (default), `abl_2013` or `path_loss`.
    public var model: DistanceModel
    /// `distance.path_loss_exponent`: n of the path-loss model (default 2.7).
    public var pathLossExponent: Double
    /// `distance.receiver_offset_db`: added to every RSSI this gateway measures before estimating, to even
    /// out receivers that read high or low (default 0).
    public var receiverOffsetDB: Double
    /// `distance.measured_power`: measured power at 1 m (dBm) per format name for beacons that do not
    /// transmit one (default: -59 for every format via `defaultMeasuredPower`).
    public var measuredPower: [String: Int]
    /// `distance.default_measured_power`: measured power for formats not in `measured_power` (default -59).
    public var defaultMeasuredPower: Int

    public init(
        model: DistanceModel = .ablCurveFit, pathLossExponent: Double = 2.7, receiverOffsetDB: Double = 0,
        measuredPower: [String: Int] = [:], defaultMeasuredPower: Int = -59
    ) {
        self.model = model
        self.pathLossExponent = pathLossExponent
        self.receiverOffsetDB = receiverOffsetDB
        self.measuredPower = measuredPower
        self.defaultMeasuredPower = defaultMeasuredPower
    }

    /// The measured power to assume for a format.
    public func measuredPower(for format: String) -> Int { measuredPower[format] ?? defaultMeasuredPower }

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if !pathLossExponent.isFinite || pathLossExponent < 1 || pathLossExponent > 6 {
            issues.append(
                ConfigIssue(
                    path: "distance.path_loss_exponent",
                    message: "must be between 1 and 6 (free space 2, indoors 2.5-4), got \(pathLossExponent)"))
        }
        if !receiverOffsetDB.isFinite || abs(receiverOffsetDB) > 40 {
            issues.append(
                ConfigIssue(
                    path: "distance.receiver_offset_db",
                    message: "must be between -40 and 40 dB, got \(receiverOffsetDB)"))
        }
        if let problem = Self.powerProblem(defaultMeasuredPower) {
            issues.append(ConfigIssue(path: "distance.default_measured_power", message: problem))
        }
        for (format, power) in measuredPower.sorted(by: { $0.key < $1.key }) {
            if let problem = Self.powerProblem(power) {
                issues.append(ConfigIssue(path: "distance.measured_power.\(format)", message: problem))
            }
        }
        return issues
    }

    static func powerProblem(_ power: Int) -> String? {
        (-120 ... -1).contains(power) ? nil : "measured power at 1 m must be between -120 and -1 dBm, got \(power)"
    }
}
