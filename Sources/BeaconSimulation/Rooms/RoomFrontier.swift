import BeaconRooms

/// `beaconbridge simulate --frontier` on rooms scenarios (docs/rooms.md, "The rooms frontier"): the arbiter over
/// a bounded grid of its parameters (`RoomFrontier.Variant.grid`), next to its defaults, the two baselines and the
/// oracle rows, every rule on the same sightings of the same worlds. Per rule the figures of the rooms table
/// pooled over the runs added, with missed room changes counted as infinitely late in the p95 (a rule cannot look
/// fast by never showing a room), and whether the rule is on the Pareto frontier of (wrong %, false switches per
/// beacon-hour, p95) among the deployable rules (oracles are shown, never on the frontier).
public struct RoomFrontier: Sendable {
    /// A change to the scenario's arbiter settings; nil keys keep the scenario's value.
    public struct Variant: Sendable, Equatable {
        public var margin: Double?
        public var dwell: Double?
        public var rise: Double?
        public var slowMargin: Double?
        public var slowDwell: Double?
        public var medianWindow: Double?

        public init(
            margin: Double? = nil, dwell: Double? = nil, rise: Double? = nil, slowMargin: Double? = nil,
            slowDwell: Double? = nil, medianWindow: Double? = nil
        ) {
            self.margin = margin
            self.dwell = dwell
            self.rise = rise
            self.slowMargin = slowMargin
            self.slowDwell = slowDwell
            self.medianWindow = medianWindow
        }

        public func applied(to base: RoomArbiterSettings) -> RoomArbiterSettings {
            var settings = base
            if let margin { settings.margin = margin }
            if let dwell { settings.dwell = dwell }
            if let rise { settings.rise = rise }
            if let slowMargin { settings.slowMargin = slowMargin }
            if let slowDwell { settings.slowDwell = slowDwell }
            if let medianWindow { settings.medianWindow = medianWindow }
            return settings
        }

        /// E.g. `m8-d4-r6-sm2-sd10-w60` for the keys it sets (`margin_db`, `dwell_s`, `rise_db`, `slow_margin_db`,
        /// `slow_dwell_s`, `median_window_s`).
        public var name: String {
            let parts: [(String, Double?)] = [
                ("m", margin), ("d", dwell), ("r", rise), ("sm", slowMargin), ("sd", slowDwell), ("w", medianWindow),
            ]
            let set = parts.compactMap { key, value in value.map { key + Self.text($0) } }
            return set.isEmpty ? "arbiter" : "arbiter-" + set.joined(separator: "-")
        }

        private static func text(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }

        /// The grid `--frontier` runs (136 variants): the fast path (`margin_db` 4-12 × `rise_db` 0-9 × `dwell_s`
        /// 1-8, slow path as configured), the slow path (`slow_margin_db` 0.5-4 × `slow_dwell_s` 5-40 ×
        /// `median_window_s` 15-60, fast path as configured), and the slow path alone (the fast path off: a 40 dB
        /// margin).
        public static let grid: [Variant] = {
            var variants: [Variant] = []
            for margin in [4.0, 6, 8, 10, 12] {
                for rise in [0.0, 3, 6, 9] {
                    for dwell in [1.0, 2, 4, 8] { variants.append(Variant(margin: margin, dwell: dwell, rise: rise)) }
                }
            }
            for slowMargin in [0.5, 1, 2, 4] {
                for slowDwell in [5.0, 10, 20, 40] {
                    for window in [15.0, 30, 60] {
                        variants.append(Variant(slowMargin: slowMargin, slowDwell: slowDwell, medianWindow: window))
                    }
                }
            }
            for slowMargin in [1.0, 2] {
                for slowDwell in [10.0, 20] {
                    for window in [30.0, 60] {
                        variants.append(
                            Variant(margin: 40, slowMargin: slowMargin, slowDwell: slowDwell, medianWindow: window))
                    }
                }
            }
            return variants
        }()
    }

    /// One row's figures over all the runs added.
    public struct Point: Sendable, Equatable {
        public enum Family: String, Sendable { case arbiter, variant, baseline, oracle }
        public var name: String
        public var family: Family
        public var wrongShare: Double
        public var falsePerBeaconHour: Double
        public var trueChanges: Int
        public var missed: Int
        public var latencyP50: Double
        /// With missed room changes as infinitely late.
        public var latencyP95: Double
        /// Not dominated by another deployable rule on (wrong share, false/b-h, p95); never for an oracle.
        public var pareto = false

        /// Strictly better than `other` on wrong share, false switches, latency p50 and p95, with no more
        /// missed room changes.
        public func beatsOnEveryFigure(_ other: Point) -> Bool {
            wrongShare < other.wrongShare && falsePerBeaconHour < other.falsePerBeaconHour
                && latencyP50 < other.latencyP50 && latencyP95 < other.latencyP95 && missed <= other.missed
        }

        fileprivate func dominates(_ other: Point) -> Bool {
            Pareto.dominates(
                [wrongShare, falsePerBeaconHour, latencyP95],
                [other.wrongShare, other.falsePerBeaconHour, other.latencyP95])
        }
    }

    public let variants: [Variant]
    /// Also every variant fed the links' true levels once a second (`RoomOracle.sightings(fixed: false)`)
    /// instead of the sightings, as oracle rows named `<variant>@true-levels`: whether any setting of the rule
    /// would meet the goals if the fast terms (fading, loss, report noise) were perfectly removed.
    public let trueLevels: Bool
    private var runs: [RoomSummary] = []
    private var variantRuns: [[RoomSummary.Rule]]
    private var trueLevelRuns: [[RoomSummary.Rule]]
    public private(set) var runCount = 0

    public init(variants: [Variant] = Variant.grid, trueLevels: Bool = false) {
        self.variants = variants
        self.trueLevels = trueLevels
        variantRuns = Array(repeating: [], count: variants.count)
        trueLevelRuns = Array(repeating: [], count: trueLevels ? variants.count : 0)
    }

    /// Runs one scenario (one seed): the table's rules and oracles, then every variant on the same world.
    public mutating func add(_ scenario: RoomScenario) {
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        runs.append(run.run(in: world, calibrationRows: false))
        let levels = trueLevels ? world.oracle.sightings(fixed: false) : []
        for (index, variant) in variants.enumerated() {
            let arbiter = RoomArbiter(settings: variant.applied(to: run.scenario.arbiter))
            variantRuns[index].append(run.score(arbiter, name: variant.name, stream: world.sightings, in: world))
            if trueLevels {
                trueLevelRuns[index].append(
                    run.score(arbiter, name: variant.name + "@true-levels", stream: levels, in: world))
            }
        }
        runCount += 1
    }

    /// Every row's figures pooled over the runs added: the arbiter with the scenarios' settings, the variants,
    /// the baselines, then the oracles; Pareto flags set among the first three.
    public func points() -> [Point] {
        let all = RoomSummary.merged(runs)
        var points: [Point] = []
        for (index, rule) in all.rules.enumerated() {
            points.append(Self.point(rule, index == 0 ? .arbiter : .baseline))
        }
        for list in variantRuns {
            var merged: [RoomSummary.Rule] = []
            RoomSummary.merge(list, into: &merged)
            if let rule = merged.first { points.append(Self.point(rule, .variant)) }
        }
        points += all.oracles.map { Self.point($0, .oracle) }
        for list in trueLevelRuns {
            var merged: [RoomSummary.Rule] = []
            RoomSummary.merge(list, into: &merged)
            if let rule = merged.first { points.append(Self.point(rule, .oracle)) }
        }
        let rules = points.filter { $0.family != .oracle }
        for index in points.indices where points[index].family != .oracle {
            points[index].pareto = !rules.contains { $0.dominates(points[index]) }
        }
        return points
    }

    static func point(_ rule: RoomSummary.Rule, _ family: Point.Family) -> Point {
        let late = rule.latencies + Array(repeating: Double.infinity, count: rule.missed)
        return Point(
            name: rule.name, family: family, wrongShare: rule.wrongShare,
            falsePerBeaconHour: rule.falseSwitchesPerHour, trueChanges: rule.trueChanges, missed: rule.missed,
            latencyP50: SimulationSummary.percentile(late, 0.5) ?? 0,
            latencyP95: SimulationSummary.percentile(late, 0.95) ?? 0)
    }
}
