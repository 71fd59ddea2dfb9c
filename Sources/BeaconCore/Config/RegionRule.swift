/// One monitored region (YAML list `regions`): which beacons, when they are inside, and how fast the state may
/// change. Keys and defaults are documented in docs/tracking-and-regions.md.
///
/// Decisions use accumulated evidence rather than a single smoothed value crossing a line (a CUSUM test):
/// each report adds `rssi - enterLevel` dB to a sum that never drops below 0; the beacon enters when the sum
/// reaches `enterEvidence` and the run that built it has lasted `minDwell`. While inside, each report adds
/// `exitLevel - rssi`; a report that leaves this second sum at 0 is a qualifying sighting, and the beacon exits
/// `exitPeriod` after the last one. See the doc for the numbers behind the defaults.
public struct RegionRule: Sendable, Equatable {
    public var name: String
    public var match: RegionMatch
    /// nil: any sighting qualifies (iOS-style region: inside while heard at all).
    public var enter: RegionCondition?
    /// nil: derived from `enter` (`RegionCondition.defaultExit`).
    public var exit: RegionCondition?
    /// dB·reports of evidence before entering (YAML `enter_evidence_db`, default 120).
    public var enterEvidence: Double
    /// Seconds the evidence run must have lasted before entering (YAML `min_dwell_s`, default 1).
    public var minDwell: Double
    /// Seconds after the last qualifying sighting before exiting (YAML `exit_period_s`, default 30).
    public var exitPeriod: Double
    /// nil: region decisions use every report's raw RSSI; set: they use this filter's output instead.
    public var filter: FilterSettings?

    public init(name: String, match: RegionMatch, enter: RegionCondition? = nil, exit: RegionCondition? = nil,
                enterEvidence: Double = 120, minDwell: Double = 1, exitPeriod: Double = 30,
                filter: FilterSettings? = nil) {
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
