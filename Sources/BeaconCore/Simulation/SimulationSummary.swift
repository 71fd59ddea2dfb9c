/// Accuracy of a simulation run against its ground truth.
public struct SimulationSummary: Sendable, Equatable {
    public struct EventCounts: Sendable, Equatable {
        public var enter = 0, exit = 0, state = 0, seen = 0, away = 0, sighting = 0
    }

    /// One (region, beacon) pair.
    public struct Pair: Sendable, Equatable {
        public var region: String
        public var beaconID: String
        /// Seconds compared (from the beacon's first report) and seconds the engine showed the expected state
        /// (truth, with exits due one exit period after leaving).
        public var judgedSeconds = 0.0
        public var rightSeconds = 0.0
        /// Engine transitions with no true transition to match: two make a flap.
        public var falseTransitions = 0
        /// True transitions the engine never made.
        public var missed = 0
        /// Seconds from the true transition to the engine's event (exit latencies include the exit period).
        public var enterLatencies: [Double] = []
        public var exitLatencies: [Double] = []
    }

    public var observations: Int
    public var events: EventCounts
    public var restarts: Int
    public var evictions: UInt64 = 0
    public var pairs: [Pair] = []

    public var rightFraction: Double {
        let judged = pairs.reduce(0) { $0 + $1.judgedSeconds }
        return judged > 0 ? pairs.reduce(0) { $0 + $1.rightSeconds } / judged : 1
    }
    public var falseTransitions: Int { pairs.reduce(0) { $0 + $1.falseTransitions } }
    /// Enter/exit pairs the truth did not have.
    public var flaps: Int { falseTransitions / 2 }
    public var missed: Int { pairs.reduce(0) { $0 + $1.missed } }
    public var enterLatencies: [Double] { pairs.flatMap(\.enterLatencies).sorted() }
    public var exitLatencies: [Double] { pairs.flatMap(\.exitLatencies).sorted() }

    /// Nearest-rank percentile (p in 0...1) of values; nil when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank - 1, 0), sorted.count - 1)]
    }
}
