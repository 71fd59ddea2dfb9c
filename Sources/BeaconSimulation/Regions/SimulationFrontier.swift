import BeaconTracking

/// `beaconbridge simulate --frontier`: an empirical latency / false-transition frontier over a family of simple
/// rules on the same report streams (docs/tracking-and-regions.md, "Is the latency goal attainable"): the
/// engine with its defaults and over a grid of `enter_margin_db` × `enter_evidence_db`, the four peer
/// baselines, and every `FrontierRule` (a time-window mean of RSSI against a threshold).
///
/// Add runs one at a time (`add`), then read `points()`: per rule the false transitions per beacon-hour, the
/// enter p95 at ≥ 1 Hz and at ≥ 5 Hz and the exit p95, by the old definition (from the true crossing, every
/// transition) and as users feel them (issue 30), with missed transitions counted as infinitely late (so a rule
/// cannot look fast by never entering), and whether it is on the Pareto frontier of false transitions and the
/// three felt latencies. The engine also runs with each `sensitivity` preset.
///
/// With a `teach` (`--frontier --teach`), every run's links are taught first (`TeachPhase`) and the engine runs,
/// on the same report stream and truth, once per `TaughtFrontierRule` of `taughtGrid` with the taught levels
/// (family `taught`) and once with the oracle's (family `oracle`: each link's constant offset told exactly).
public struct SimulationFrontier: Sendable {
    /// One rule's figures over all the runs added.
    public struct Point: Sendable, Equatable {
        public enum Family: String, Sendable { case engine, baseline, mean, taught, oracle }
        public var name: String
        public var family: Family
        public var falsePerBeaconHour: Double
        public var falseExitsDuringStays: Int
        public var missed: Int
        public var rightFraction: Double
        /// p95 enter latency of beacons at ≥ 1 Hz and at ≥ 5 Hz, and p95 exit latency (s; infinite if missed).
        public var enterP95: Double
        public var enterP95Fast: Double
        public var exitP95: Double
        /// The same three as users feel them (`SimulationSummary.Pair.feltEnterLatencies`): enters of beacons
        /// that come to rest at least 1 m inside, exits 1 m beyond the exit radius; missed ones infinite.
        public var feltEnterP95 = 0.0
        public var feltEnterP95Fast = 0.0
        public var feltExitP95 = 0.0
        /// The felt p95s over the felt transitions the rule made (the issue-43 tables' figures), nil when it made
        /// none; the felt transitions it missed are counted apart (≥ 1 Hz, ≥ 5 Hz, exits).
        public var madeFeltEnterP95: Double?
        public var madeFeltEnterP95Fast: Double?
        public var madeFeltExitP95: Double?
        public var feltMissedEnters = 0
        public var feltMissedEntersFast = 0
        public var feltMissedExits = 0
        /// Not dominated by another point on false transitions and the felt enter p95s and exit p95.
        public var pareto = false

        /// Whether the issue-30 latency goals hold on latency as users feel it: enter p95 < 10 s (≥ 1 Hz) and
        /// < 5 s (≥ 5 Hz), exit p95 within `exitBound` s (the exit period + 10 s).
        public func meetsLatencyGoals(exitBound: Double) -> Bool {
            feltEnterP95 < 10 && feltEnterP95Fast < 5 && feltExitP95 <= exitBound
        }

        fileprivate func dominates(_ other: Point) -> Bool {
            Pareto.dominates(
                [falsePerBeaconHour, feltEnterP95, feltEnterP95Fast, feltExitP95],
                [other.falsePerBeaconHour, other.feltEnterP95, other.feltEnterP95Fast, other.feltExitP95])
        }
    }

    /// The engine with each `sensitivity` preset (its parameters replacing the scenario's).
    public static let presets = RegionSensitivity.allCases

    /// The engine's grid: `enter_margin_db` × `enter_evidence_db` (every other key as the scenario has it).
    public static let engineGrid: [(margin: Double, evidence: Double)] = [1.0, 2, 3.5, 5].flatMap { margin in
        [15.0, 30, 60].map { (margin, $0) }
    }

    public let rules: [FrontierRule]
    /// The teach each run's links get first (nil: no taught or oracle rows).
    public let teach: TeachPhase?
    /// The taught links' grid, run with the taught levels and with the oracle's.
    public let taughtGrid: [TaughtFrontierRule]
    private var runs: [SimulationSummary] = []
    private var taughtRuns: [[SimulationSummary]]
    private var oracleRuns: [[SimulationSummary]]
    private var gridRuns: [[SimulationSummary]] = Array(repeating: [], count: SimulationFrontier.engineGrid.count)
    private var presetRuns: [[SimulationSummary]] = Array(repeating: [], count: SimulationFrontier.presets.count)
    /// The largest exit period of the regions seen (the exit goal is this + 5 s).
    public private(set) var exitPeriod = 0.0

    public init(
        rules: [FrontierRule] = FrontierRule.family, teach: TeachPhase? = nil,
        taughtGrid: [TaughtFrontierRule] = TaughtFrontierRule.defaultGrid
    ) {
        self.rules = rules
        self.teach = teach
        self.taughtGrid = teach == nil ? [] : taughtGrid
        taughtRuns = Array(repeating: [], count: self.taughtGrid.count)
        oracleRuns = Array(repeating: [], count: self.taughtGrid.count)
    }

    /// Runs one scenario (one seed) for every rule: the default engine with the baselines and the window
    /// rules, then the engine once per grid point (the same reports).
    public mutating func add(_ scenario: Scenario) {
        let run = ScenarioRun(scenario)
        runs.append(run.run(frontier: rules))
        exitPeriod = max(exitPeriod, scenario.regions.map(\.exitPeriod).max() ?? 0)
        for (index, point) in Self.engineGrid.enumerated() {
            let regions = scenario.regions.map { rule in
                var rule = rule
                rule.enterMargin = point.margin
                rule.enterEvidence = point.evidence
                return rule
            }
            gridRuns[index].append(run.with(regions: regions).run(baselines: false))
        }
        for (index, preset) in Self.presets.enumerated() {
            let regions = scenario.regions.map { rule in
                var rule = rule
                rule.apply(preset)
                return rule
            }
            presetRuns[index].append(run.with(regions: regions).run(baselines: false))
        }
        guard let teach else { return }
        let links = teach.teach(scenario)
        for (index, point) in taughtGrid.enumerated() {
            taughtRuns[index].append(run.run(baselines: false, taught: point.regions(scenario, links: links.taught)))
            oracleRuns[index].append(run.run(baselines: false, taught: point.regions(scenario, links: links.oracle)))
        }
    }

    /// Every rule's figures, pooled over the runs added, with the Pareto flags set.
    public func points() -> [Point] {
        let all = SimulationSummary.merged(runs)
        var points = [Self.point("beaconbridge", .engine, all)]
        for (index, grid) in Self.engineGrid.enumerated() {
            points.append(
                Self.point(
                    "beaconbridge-m\(Self.text(grid.margin))-e\(Self.text(grid.evidence))", .engine,
                    SimulationSummary.merged(gridRuns[index])))
        }
        for (index, preset) in Self.presets.enumerated() {
            points.append(
                Self.point("beaconbridge-\(preset.rawValue)", .engine, SimulationSummary.merged(presetRuns[index])))
        }
        points += all.baselines.map { Self.point($0.name, .baseline, $0) }
        points += all.frontier.map { Self.point($0.name, .mean, $0) }
        for (index, rule) in taughtGrid.enumerated() {
            points.append(Self.point("taught-\(rule.name)", .taught, SimulationSummary.merged(taughtRuns[index])))
            points.append(Self.point("oracle-\(rule.name)", .oracle, SimulationSummary.merged(oracleRuns[index])))
        }
        for index in points.indices {
            points[index].pareto = !points.contains { $0.dominates(points[index]) }
        }
        return points
    }

    private static func point(_ name: String, _ family: Point.Family, _ scores: some PairScores) -> Point {
        func p95(_ latencies: [Double], missed: Int) -> Double {
            SimulationSummary.percentile(latencies + Array(repeating: .infinity, count: missed), 0.95) ?? 0
        }
        let pairs = scores.pairs
        let fast = pairs.filter { $0.rate >= 5 }
        let slow = pairs.filter { $0.rate >= 1 }
        return Point(
            name: name, family: family, falsePerBeaconHour: scores.falseTransitionsPerBeaconHour,
            falseExitsDuringStays: scores.falseExitsDuringStays, missed: scores.missed,
            rightFraction: scores.rightFraction,
            enterP95: p95(slow.flatMap(\.enterLatencies), missed: slow.reduce(0) { $0 + $1.missedEnters }),
            enterP95Fast: p95(fast.flatMap(\.enterLatencies), missed: fast.reduce(0) { $0 + $1.missedEnters }),
            exitP95: p95(pairs.flatMap(\.exitLatencies), missed: pairs.reduce(0) { $0 + $1.missed - $1.missedEnters }),
            feltEnterP95: p95(scores.feltEnterLatencies(atLeast: 1), missed: scores.feltMissedEnters(atLeast: 1)),
            feltEnterP95Fast: p95(scores.feltEnterLatencies(atLeast: 5), missed: scores.feltMissedEnters(atLeast: 5)),
            feltExitP95: p95(scores.feltExitLatencies, missed: scores.feltMissedExits),
            madeFeltEnterP95: SimulationSummary.percentile(scores.feltEnterLatencies(atLeast: 1), 0.95),
            madeFeltEnterP95Fast: SimulationSummary.percentile(scores.feltEnterLatencies(atLeast: 5), 0.95),
            madeFeltExitP95: SimulationSummary.percentile(scores.feltExitLatencies, 0.95),
            feltMissedEnters: scores.feltMissedEnters(atLeast: 1),
            feltMissedEntersFast: scores.feltMissedEnters(atLeast: 5),
            feltMissedExits: scores.feltMissedExits)
    }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
