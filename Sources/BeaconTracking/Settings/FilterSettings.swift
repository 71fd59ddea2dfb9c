import BeaconConfigReading

/// Which RSSI filter smooths a beacon's signal, with its parameters. Selected per gateway
/// (`tracker.filter`) and optionally per region (`regions[i].filter`). YAML keys are in
/// docs/tracking-and-regions.md.
public struct FilterSettings: Sendable, Equatable, Hashable {
    public enum Kind: String, Sendable, Equatable, Hashable, CaseIterable {
        /// The Android Beacon Library's running average: samples of the last `window_s`, sorted,
        /// `count/10 + 1` dropped from each end when more than 2, mean of the rest.
        case runningAverage = "running-average"
        /// 1-D Kalman filter on RSSI (room-assistant's parameters by default).
        case kalman
        /// Mean of the samples inside the Tukey fence (median ± k·IQR) over `window_s` (ESPresense 2025).
        case medianIQR = "median-iqr"
    }

    public var kind: Kind
    /// Time window of the window-based filters (running-average default 20 s, median-iqr default 15 s).
    public var window: Double
    /// Most samples a window filter keeps per beacon (bounded memory; oldest dropped first).
    public var maxSamples: Int
    /// Kalman process noise (variance added per report).
    public var processNoise: Double
    /// Kalman measurement noise (variance of one report).
    public var measurementNoise: Double
    /// Tukey fence multiplier for median-iqr.
    public var fenceK: Double

    public init(
        kind: Kind, window: Double? = nil, maxSamples: Int = 64, processNoise: Double = 0.008,
        measurementNoise: Double = 4, fenceK: Double = 1.5
    ) {
        self.kind = kind
        self.window = window ?? (kind == .medianIQR ? 15 : 20)
        self.maxSamples = maxSamples
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
        self.fenceK = fenceK
    }

    /// The gateway default: Kalman (0.008 / 4). O(1) memory per beacon and about 3 s of lag at 7 reports/s;
    /// region decisions do not depend on it (see `RegionRule.enterEvidence`).
    public static let `default` = FilterSettings(kind: .kalman)
    public static let runningAverage = FilterSettings(kind: .runningAverage)
    public static let medianIQR = FilterSettings(kind: .medianIQR)

    /// Problems with these settings; `path` is the key path of this block, e.g. `tracker.filter`.
    public func validate(path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        switch kind {
        case .runningAverage, .medianIQR:
            if !(window > 0 && window <= 600) {
                issues.append(
                    ConfigIssue(path: "\(path).window_s", message: "must be > 0 and <= 600 seconds, got \(window)"))
            }
            if !(3...1024).contains(maxSamples) {
                issues.append(ConfigIssue(path: "\(path).max_samples", message: "must be 3...1024, got \(maxSamples)"))
            }
            if kind == .medianIQR, !(fenceK >= 0 && fenceK.isFinite) {
                issues.append(ConfigIssue(path: "\(path).fence_k", message: "must be >= 0, got \(fenceK)"))
            }
        case .kalman:
            if !(processNoise > 0 && processNoise.isFinite) {
                issues.append(ConfigIssue(path: "\(path).process_noise", message: "must be > 0, got \(processNoise)"))
            }
            if !(measurementNoise > 0 && measurementNoise.isFinite) {
                issues.append(
                    ConfigIssue(path: "\(path).measurement_noise", message: "must be > 0, got \(measurementNoise)"))
            }
        }
        return issues
    }
}
