/// One monitored region (YAML list `regions`): which beacons, when they are inside, and how fast the state may
/// change. Keys and defaults are documented in docs/tracking-and-regions.md.
///
/// Decisions use evidence per unit of time (a one-sided CUSUM in dB·s, so the advertising rate does not change
/// how fast a beacon enters): each report adds (clamped margin above the enter level − `enterMargin`) × the
/// time it stands for; the beacon enters when the sum reaches `enterEvidence` and the run that built it has
/// lasted `minDwell`. While inside, a second sum (the exit debt, bounded by `exitEvidence`) collects the time
/// spent below the exit level; a report that leaves it at 0 is a qualifying sighting. The beacon exits once it
/// has been heard without qualifying for `exitPeriod`, or after `dropoutGrace` of total silence after
/// qualifying reports. See docs/tracking-and-regions.md for the numbers behind the defaults.
///
/// Two speeds (issue 30): beside that slow sum, a fast one adds (clamped margin − `fastEnterMargin`) × time; a
/// beacon whose reports stand well above the enter level, consistently (the sum only grows while reports keep
/// clearing the higher margin, and it needs `RegionEvaluator.fastMinReports` reports), enters once it reaches
/// `fastEnterEvidence`, in seconds. Weak evidence near the boundary still takes the slow sum's time. The
/// defaults are the `balanced` preset's (`RegionSensitivity`).
public struct RegionRule: Sendable, Equatable {
    public var name: String
    public var match: RegionMatch
    /// nil: any sighting qualifies (iOS-style region: inside while heard at all).
    public var enter: RegionCondition?
    /// nil: derived from `enter` (`RegionCondition.defaultExit`).
    public var exit: RegionCondition?
    /// dB·s of evidence before entering (YAML `enter_evidence_db`, default 30).
    public var enterEvidence: Double
    /// dB a report must be above the enter level to add evidence (YAML `enter_margin_db`, default 3.5).
    public var enterMargin: Double
    /// Bound of the exit debt, dB·s (YAML `exit_evidence_db`, default 20).
    public var exitEvidence: Double
    /// Seconds of total silence after qualifying reports before exiting (YAML `dropout_grace_s`, default 60).
    public var dropoutGrace: Double
    /// Seconds the evidence run must have lasted before entering (YAML `min_dwell_s`, default 1).
    public var minDwell: Double
    /// Seconds after the last qualifying sighting before exiting (YAML `exit_period_s`, default 30).
    public var exitPeriod: Double
    /// nil: region decisions use every report's raw RSSI; set: they use this filter's output instead.
    public var filter: FilterSettings?
    /// dB·s of strong evidence before a fast enter (YAML `fast_enter_evidence_db`, default 10; 0 turns it off).
    public var fastEnterEvidence: Double
    /// dB a report must be above the enter level to add strong evidence (YAML `fast_enter_margin_db`, default 6).
    public var fastEnterMargin: Double
    /// The preset the region named itself (YAML `sensitivity`); nil when it named none (its timing keys then
    /// come from `tracking.sensitivity`, `balanced` unless set).
    public var sensitivity: RegionSensitivity?
    /// A device (canonical beacon id) whose taught links this region applies to every device it matches that has
    /// none of its own on a gateway, moved by the difference of the two devices' reference powers (YAML
    /// `taught_like`; docs/teach.md, "A region taught with one device, applied to another").
    public var taughtLike: String?

    public init(
        name: String, match: RegionMatch, enter: RegionCondition? = nil, exit: RegionCondition? = nil,
        enterEvidence: Double = 30, minDwell: Double = 1, exitPeriod: Double = 30,
        filter: FilterSettings? = nil, enterMargin: Double = 3.5, exitEvidence: Double = 20,
        dropoutGrace: Double = 60, fastEnterEvidence: Double = 10, fastEnterMargin: Double = 6,
        sensitivity: RegionSensitivity? = nil, taughtLike: String? = nil
    ) {
        self.taughtLike = taughtLike
        self.fastEnterEvidence = fastEnterEvidence
        self.fastEnterMargin = fastEnterMargin
        self.sensitivity = sensitivity
        self.enterMargin = enterMargin
        self.exitEvidence = exitEvidence
        self.dropoutGrace = dropoutGrace
        self.name = name
        self.match = match
        self.enter = enter
        self.exit = exit
        self.enterEvidence = enterEvidence
        self.minDwell = minDwell
        self.exitPeriod = exitPeriod
        self.filter = filter
    }

    /// The exit condition in force (given or derived).
    public var effectiveExit: RegionCondition? { exit ?? enter?.defaultExit }
}
