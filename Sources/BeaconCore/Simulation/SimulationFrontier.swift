/// `beaconbridge simulate --frontier`: an empirical latency / false-transition frontier over a family of simple
/// rules on the same report streams (docs/tracking-and-regions.md, "Is the latency goal attainable"): the
/// engine with its defaults and over a grid of `enter_margin_db` × `enter_evidence_db`, the four peer
/// baselines, and every `FrontierRule` (a time-window mean of RSSI against a threshold).
///
/// Add runs one at a time (`add`), then read `points()`: per rule the false transitions per beacon-hour, the
/// enter p95 at ≥ 1 Hz and at ≥ 5 Hz and the exit p95, with missed transitions counted as infinitely late (so a
/// rule cannot look fast by never entering), and whether it is on the Pareto frontier of those four figures.
public struct SimulationFrontier: Sendable {
    /// One rule's figures over all the runs added.
    public struct Point: Sendable, Equatable {
        public enum Family: String, Sendable { case engine, baseline, mean }
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
        /// Not dominated by another point on false transitions, both enter p95s and the exit p95.
        public var pareto = false

        /// Whether the issue-9 latency goals hold: enter p95 < 15 s (≥ 1 Hz) and < 8 s (≥ 5 Hz), exit p95 within
        /// `exitBound` s (the exit period + 5 s).
        public func meetsLatencyGoals(exitBound: Double) -> Bool {
            enterP95 < 15 && enterP95Fast < 8 && exitP95 <= exitBound
        }

        fileprivate func dominates(_ other: Point) -> Bool {
            SimulationMath.dominates(
                [falsePerBeaconHour, enterP95, enterP95Fast, exitP95],
                [other.falsePerBeaconHour, other.enterP95, other.enterP95Fast, other.exitP95])
        }
    }

    /// The engine's grid: `enter_margin_db` × `enter_evidence_db` (every other key as the scenario has it).
    public static let engineGrid: [(margin: Double, evidence: Double)] = [1.0, 2, 3.5, 5].flatMap { margin in
        [15.0, 30, 60].map { (margin, $0) }
    }

    public let rules: [FrontierRule]
    private var runs: [SimulationSummary] = []
    private var gridRuns: [[SimulationSummary]] = Array(repeating: [], count: SimulationFrontier.engineGrid.count)
    /// The largest exit period of the regions seen (the exit goal is this + 5 s).
    public private(set) var exitPeriod = 0.0

    public init(rules: [FrontierRule] = FrontierRule.family) { self.rules = rules }

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
        points += all.baselines.map { Self.point($0.name, .baseline, $0) }
        points += all.frontier.map { Self.point($0.name, .mean, $0) }
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
            exitP95: p95(pairs.flatMap(\.exitLatencies), missed: pairs.reduce(0) { $0 + $1.missed - $1.missedEnters }))
    }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
