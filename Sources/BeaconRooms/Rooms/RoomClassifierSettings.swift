import BeaconConfigReading

/// Parameters of the arbiter's fingerprint classifier (issue 29; `RoomArbiter+Classifier.swift`), used instead of
/// the level rule when every room of the site has a fingerprint. Read from the same `rooms:` section (and a rooms
/// scenario's `arbiter` block) as the rule's keys; documented with their reasons in docs/rooms.md, "The
/// classifier (issue 29, session 19)".
public struct RoomClassifierSettings: Sendable, Equatable {
    /// Whether the classifier decides at all once every room is trained (`fingerprint_classifier`). Off by
    /// default: on the simulator's rooms scenarios it still switches more than the level rule on some files, with
    /// either likelihood (docs/rooms.md, "Session 23" and "Session 26"), and with the common spread or the blocking
    /// state of Session 28.
    public var enabled = false
    /// Whether, with the classifier off, trained rooms are decided by the fingerprint margin rule instead of the
    /// level rule (`fingerprint_rule`; `RoomArbiter+FingerprintRule.swift`, docs/rooms.md "Session 29"): the level
    /// rule's smoothing, median window, margins and dwells, with rooms scored by the distance of the beacon's levels
    /// to each trained room's fingerprint means instead of by their loudest gateway. Off by default (the gate of
    /// issue 43 is not met on every rooms file: docs/rooms.md "Session 29"). `fingerprint_classifier: true` takes
    /// precedence.
    public var rule = false
    /// How the fingerprint margin rule takes a beacon's own level (its transmit power, a pocket) out
    /// (`fingerprint_rule_offset`).
    public var ruleOffset = RuleOffset.differences

    /// `fingerprint_rule_offset`: none (absolute levels, as `oracle-fp`), learned (the device offset learned from the
    /// decided room's fingerprint, as the classifier learns it), differences (per room and step the mean difference
    /// of the gateways heard now and in its fingerprint taken out, as `oracle-fp-diff`).
    public enum RuleOffset: String, Sendable, Equatable, CaseIterable {
        case none, learned, differences
    }
    /// Seconds of a gateway's reports whose median is its current level for the classifier (a short robust
    /// average: channel-mixed reports decorrelate within about 1 s, so 5 s holds about five independent ones).
    public var levelWindow: Double = 5
    /// Least spread (dB) a fingerprint's gateway is credited with: a short walk at few spots underestimates the
    /// spread, and placement shadowing alone is 4.3-4.8 dB (field notes).
    public var spreadFloor: Double = 4
    /// The current level's own noise (dB), added in quadrature to the fingerprint's spread: a median of about
    /// five reports of 4.9 dB spread.
    public var evidenceNoise: Double = 3
    /// Whether a room's likelihood is of the differences between gateways (`fingerprint_differences`): per room and
    /// step, the offset common to every link that best fits the levels to the room's means (bounded to
    /// ±`offsetLimit`) is taken out before the Gaussian terms, as the level rule's comparison of gateways does
    /// implicitly; a posture (3-21 dB shared across a body's links, field notes) then does not move the beacon.
    /// Off: the absolute levels (less the slow device offset) count (docs/rooms.md, "Session 26").
    public var differences = false
    /// Whether every gateway of every room is credited with the same spread, `spreadFloor` (with `evidenceNoise`
    /// in quadrature), instead of its training walk's (`fingerprint_common_spread`, docs/rooms.md, "Session 28").
    /// A walk at three spots gives about three independent samples of how a room's level varies from spot to
    /// spot, so its spread is known to about ±50 % (the standard error of a deviation from n samples is
    /// σ/√(2(n−1))); in a Gaussian likelihood that error enters as ln σ per gateway and step and as the width
    /// a deviation is measured in, so a room whose walk passed near its gateway (a wide spread) loses against a
    /// room whose levels fit worse. With one spread the likelihood ranks rooms by the squared distance to their
    /// means, as the fingerprint floor (`oracle-fp`) does.
    public var commonSpread = false
    /// Whether each link of each room carries a blocked/clear state (`fingerprint_blocking`, docs/rooms.md,
    /// "Session 28"): a body in the way lowers one link by 8-15 dB for 5-60 s, once per ten minutes (field notes),
    /// so a link's level is drawn from its fingerprint's Gaussian while clear and from one `Self.blockingDepth`
    /// lower while blocked, and the state persists from step to step as episodes do (`Self.blockingLength`,
    /// `Self.blockingInterval`). Off: a deviation counts at most `RoomArbiter.maximumDeviation` spreads at every
    /// step, so a blocked link of the beacon's own room adds evidence against it for as long as the body stays.
    public var blocking = false
    /// Bound of the heard/not-heard terms: a gateway's heard share is taken within `missingFloor...1 -
    /// missingFloor`, so one gateway silent (or heard unexpectedly) costs at most ln(1/missingFloor) nats.
    public var missingFloor: Double = 0.05
    /// Seconds of evidence counted as one independent observation (the filter's likelihood is weighted by the
    /// time elapsed over this, so decisions do not depend on how often sightings arrive). The level window's
    /// length: each step's evidence is the median of the last `levelWindow` seconds, so steps closer than that
    /// re-count the same reports (2 s, the single-channel correlation time, counted each report about 2.5 times,
    /// and the posterior swung on a few seconds of a body in the way; docs/rooms.md, "Session 23").
    public var observationTime: Double = 5
    /// Probability per second that a beacon changes room (the transition model; spread evenly over the other
    /// rooms: no adjacency is configured).
    public var changeRate: Double = 0.01
    /// A challenger room wins when its probability is at least `enterProbability` and the current room's below
    /// `exitProbability`, continuously for `dwell` seconds.
    public var enterProbability: Double = 0.8
    public var exitProbability: Double = 0.15
    public var dwell: Double = 1.5
    /// Time constant (s) of the per-beacon offset (its transmit power against the training device's), learned
    /// from the most likely room; clamped to ±`offsetLimit` dB.
    public var offsetTime: Double = 60
    public var offsetLimit: Double = 12

    /// Body blocking as the field notes state it: 8-15 dB (measured magnitude; the mean and the variance of a
    /// uniform depth), episodes of 5-60 s (mean 32.5 s) once per 600 s on average (an assumption, stated so).
    public static let blockingDepth = 11.5
    public static let blockingDepthVariance = 49.0 / 12
    public static let blockingLength = 32.5
    public static let blockingInterval = 600.0

    public init() {}

    /// Problems with these settings; `path` is the key path of the block that holds them.
    public func validate(path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func check(_ key: String, _ value: Double, _ range: ClosedRange<Double>, _ unit: String) {
            issues.appendRangeIssue("\(path).\(key)", value, range, unit)
        }
        check("fingerprint_level_window_s", levelWindow, 0.5...120, "seconds")
        check("fingerprint_spread_floor_db", spreadFloor, 0.5...30, "dB")
        check("fingerprint_evidence_noise_db", evidenceNoise, 0...30, "dB")
        check("fingerprint_missing_floor", missingFloor, 0.001...0.4, "")
        check("fingerprint_observation_s", observationTime, 0.1...60, "seconds")
        check("room_change_per_s", changeRate, 0.000_01...0.5, "per second")
        check("enter_probability", enterProbability, 0.5...0.999, "")
        check("exit_probability", exitProbability, 0...0.5, "")
        check("probability_dwell_s", dwell, 0...600, "seconds")
        check("device_offset_time_s", offsetTime, 1...86_400, "seconds")
        check("device_offset_max_db", offsetLimit, 0...30, "dB")
        return issues
    }

    /// The classifier's keys, over the current values (called by `RoomArbiterSettings.read(from:)`).
    public mutating func read(from r: inout ConfigReader) {
        enabled = r.bool("fingerprint_classifier", default: enabled)
        rule = r.bool("fingerprint_rule", default: rule)
        if r.has("fingerprint_rule_offset") {
            let text = r.string("fingerprint_rule_offset", default: ruleOffset.rawValue)
            if let mode = RuleOffset(rawValue: text) {
                ruleOffset = mode
            } else {
                r.issue("must be `none`, `learned` or `differences`, got `\(text)`", key: "fingerprint_rule_offset")
            }
        }
        levelWindow = r.duration("fingerprint_level_window_s", default: levelWindow)
        spreadFloor = r.value("fingerprint_spread_floor_db", default: spreadFloor)
        evidenceNoise = r.value("fingerprint_evidence_noise_db", default: evidenceNoise)
        differences = r.bool("fingerprint_differences", default: differences)
        blocking = r.bool("fingerprint_blocking", default: blocking)
        commonSpread = r.bool("fingerprint_common_spread", default: commonSpread)
        missingFloor = r.value("fingerprint_missing_floor", default: missingFloor)
        observationTime = r.duration("fingerprint_observation_s", default: observationTime)
        changeRate = r.value("room_change_per_s", default: changeRate)
        enterProbability = r.value("enter_probability", default: enterProbability)
        exitProbability = r.value("exit_probability", default: exitProbability)
        dwell = r.duration("probability_dwell_s", default: dwell)
        offsetTime = r.duration("device_offset_time_s", default: offsetTime)
        offsetLimit = r.value("device_offset_max_db", default: offsetLimit)
    }
}

extension [ConfigIssue] {
    /// Appends an issue at `path` when `value` is not finite or outside `range` (the rooms settings' checks).
    mutating func appendRangeIssue(_ path: String, _ value: Double, _ range: ClosedRange<Double>, _ unit: String) {
        guard !(value.isFinite && range.contains(value)) else { return }
        append(
            ConfigIssue(path: path, message: "must be \(range.lowerBound)...\(range.upperBound) \(unit), got \(value)"))
    }
}
