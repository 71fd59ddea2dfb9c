import BeaconConfigReading
import BeaconModel

/// When a sighting (position update) of a beacon is worth an event: the ESPresense `skip_ms` / `skip_dist`
/// idea. At most one sighting per beacon per `sightingInterval`, unless the distance moved more than
/// `sightingMinDistance` since the last published one or a region state of the beacon changed.
public struct PublishPolicy: Sendable, Equatable, Hashable {
    /// Seconds between two sightings of one beacon (YAML `sighting_interval_s`, default 5, as ESPresense's
    /// `skip_ms` 5000).
    public var sightingInterval: Double
    /// Metres the distance must move to publish before the interval ends (YAML `sighting_min_distance_m`,
    /// default 0.5, as ESPresense's `skip_distance`).
    public var sightingMinDistance: Double

    public init(sightingInterval: Double = 5, sightingMinDistance: Double = 0.5) {
        self.sightingInterval = sightingInterval
        self.sightingMinDistance = sightingMinDistance
    }

    public static let `default` = PublishPolicy()

    public func validate(path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if !(sightingInterval >= 0 && sightingInterval <= 86_400) {
            issues.append(
                ConfigIssue(
                    path: "\(path).sighting_interval_s",
                    message: "must be 0...86400 seconds, got \(sightingInterval)"))
        }
        if !(sightingMinDistance > 0 && sightingMinDistance.isFinite) {
            issues.append(
                ConfigIssue(
                    path: "\(path).sighting_min_distance_m",
                    message: "must be > 0 metres, got \(sightingMinDistance)"))
        }
        return issues
    }

    /// Whether a sighting is due now. `lastTime`/`lastDistance` describe the last published sighting.
    public func isDue(
        now: Timestamp, distance: Double?, lastTime: Timestamp?, lastDistance: Double?,
        regionChanged: Bool
    ) -> Bool {
        if regionChanged { return true }
        guard let lastTime else { return true }
        if now - lastTime >= sightingInterval { return true }
        switch (distance, lastDistance) {
        case let (now?, last?): return abs(now - last) > sightingMinDistance
        case (nil, nil): return false
        default: return true
        }
    }
}
