/// The taught and oracle rows of `simulate --frontier --teach` judged against issue 43's fallback clause
/// (docs/tracking-and-regions.md, "The taught and oracle frontier"): where no rule reaches the latency goals, a
/// taught configuration must come within 1.5× the oracle's felt enter latency at the same false transitions.
/// Latencies here are the issue-43 tables' (p95 over the felt transitions made; the missed ones counted apart).
public struct TaughtFrontierVerdict: Sendable {
    /// A taught row that keeps false transitions and felt exits within the goals, with the oracle's best felt
    /// enter p95s (≥ 1 Hz, ≥ 5 Hz) over its rows that do no worse on both (nil: no such oracle row).
    public struct Candidate: Sendable {
        public var point: SimulationFrontier.Point
        public var oracleEnterP95: Double?
        public var oracleEnterP95Fast: Double?
        /// Both felt enter p95s within `ratio` × the oracle's.
        public var withinRatio: Bool
    }

    /// The oracle rows within the false-transition and felt-exit goals with the least felt enter p95 at ≥ 1 Hz and
    /// at ≥ 5 Hz (two rows, or the same one twice).
    public var oracleFastest: SimulationFrontier.Point?
    public var oracleFastestFast: SimulationFrontier.Point?
    /// Every taught row within the false-transition and felt-exit goals, fewest false transitions first.
    public var candidates: [Candidate] = []

    /// `falseGoal`: false transitions per beacon-hour (a third of the best peer's); `exitBound`: felt exit p95
    /// (s); `ratio`: how much slower than the oracle a taught row may enter (1.5).
    public init(points: [SimulationFrontier.Point], falseGoal: Double, exitBound: Double, ratio: Double = 1.5) {
        func inGoals(_ point: SimulationFrontier.Point) -> Bool {
            guard let exit = point.madeFeltExitP95 else { return false }
            return point.falsePerBeaconHour <= falseGoal && exit <= exitBound
        }
        func fastest(_ rows: [SimulationFrontier.Point], _ figure: (SimulationFrontier.Point) -> Double?)
            -> SimulationFrontier.Point?
        {
            rows.filter { figure($0) != nil }.min { figure($0) ?? .infinity < figure($1) ?? .infinity }
        }
        let oracle = points.filter { $0.family == .oracle && inGoals($0) }
        oracleFastest = fastest(oracle, \.madeFeltEnterP95)
        oracleFastestFast = fastest(oracle, \.madeFeltEnterP95Fast)
        for point in points where point.family == .taught && inGoals(point) {
            let peers = oracle.filter { $0.falsePerBeaconHour <= point.falsePerBeaconHour }
            let slow = fastest(peers, \.madeFeltEnterP95)?.madeFeltEnterP95
            let fast = fastest(peers, \.madeFeltEnterP95Fast)?.madeFeltEnterP95Fast
            var within = false
            if let slow, let fast, let mine = point.madeFeltEnterP95, let mineFast = point.madeFeltEnterP95Fast {
                within = mine <= ratio * slow && mineFast <= ratio * fast
            }
            candidates.append(
                Candidate(point: point, oracleEnterP95: slow, oracleEnterP95Fast: fast, withinRatio: within))
        }
        candidates.sort { $0.point.falsePerBeaconHour < $1.point.falsePerBeaconHour }
    }
}
