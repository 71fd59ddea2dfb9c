import BeaconConfigReading

/// Settings of the tracker and region engine (YAML block `tracker`), documented in
/// docs/tracking-and-regions.md.
public struct TrackerSettings: Sendable, Equatable {
    /// Most beacons tracked at once; the least recently seen is evicted beyond it (`max_beacons`).
    public var maxBeacons: Int
    /// Seconds without any report before a beacon's presence turns `away` (`away_timeout_s`).
    public var awayTimeout: Double
    /// Persisted region states older than this are ignored at start (`restore_max_age_s`, ABL's 15 min).
    public var restoreMaxAge: Double
    /// While a beacon stays inside, its persisted row is refreshed at most this often (`state_persist_interval_s`).
    public var statePersistInterval: Double
    /// The gateway's RSSI filter (`filter`).
    public var filter: FilterSettings
    /// Sighting publish policy (`publish`).
    public var publish: PublishPolicy
    /// Away timeouts of single beacons by id (from `devices.known[].away_timeout_s`; not a `tracking` key).
    public var awayTimeoutOverrides: [String: Double] = [:]
    /// The longest silence a beacon is held `stale` instead of `away` when it has shown that it goes quiet that
    /// long and comes back (`stale_max_s`; 0 turns the learning off). See `RegionEvaluator.awayTimeout(of:)`.
    public var staleMax: Double = 900
    /// The regions' preset when they name none (YAML `tracking.sensitivity`, default `balanced`). Applied when
    /// the regions are read (`RegionRule(from:inherited:)`).
    public var sensitivity: RegionSensitivity = .balanced

    public init(
        maxBeacons: Int = 10_000, awayTimeout: Double = 60, restoreMaxAge: Double = 900,
        statePersistInterval: Double = 10, filter: FilterSettings = .default,
        publish: PublishPolicy = .default
    ) {
        self.maxBeacons = maxBeacons
        self.awayTimeout = awayTimeout
        self.restoreMaxAge = restoreMaxAge
        self.statePersistInterval = statePersistInterval
        self.filter = filter
        self.publish = publish
    }

    public static let `default` = TrackerSettings()

    public func validate(path: String = "tracker") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if !(1...10_000_000).contains(maxBeacons) {
            issues.append(ConfigIssue(path: "\(path).max_beacons", message: "must be 1...10000000, got \(maxBeacons)"))
        }
        if !(awayTimeout > 0 && awayTimeout <= 86_400) {
            issues.append(
                ConfigIssue(
                    path: "\(path).away_timeout_s", message: "must be > 0 and <= 86400 seconds, got \(awayTimeout)"))
        }
        if !(restoreMaxAge >= 0 && restoreMaxAge <= 30 * 86_400) {
            issues.append(
                ConfigIssue(
                    path: "\(path).restore_max_age_s", message: "must be 0...2592000 seconds, got \(restoreMaxAge)"))
        }
        if !(statePersistInterval > 0 && statePersistInterval <= 3_600) {
            issues.append(
                ConfigIssue(
                    path: "\(path).state_persist_interval_s",
                    message: "must be > 0 and <= 3600 seconds, got \(statePersistInterval)"))
        }
        if !(staleMax >= 0 && staleMax <= 86_400) {
            issues.append(
                ConfigIssue(
                    path: "\(path).stale_max_s", message: "must be 0...86400 seconds, got \(staleMax)"))
        }
        issues += filter.validate(path: "\(path).filter")
        issues += publish.validate(path: "\(path).publish")
        return issues
    }
}
