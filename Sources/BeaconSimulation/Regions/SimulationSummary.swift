import BeaconModel

/// Accuracy of a simulation run against its ground truth: the engine's, and each peer baseline's beside it.
public struct SimulationSummary: Sendable, Equatable, PairScores {
    public struct EventCounts: Sendable, Equatable {
        public var enter = 0, exit = 0, state = 0, seen = 0, stale = 0, away = 0, sighting = 0
    }

    /// One (region, beacon) pair.
    public struct Pair: Sendable, Equatable {
        public var region: String
        public var beaconID: String
        /// The beacon's advertising rate (Hz).
        public var rate = 0.0
        /// Seconds compared (from the beacon's first report) and seconds the engine showed the expected state
        /// (truth, with exits due one exit period after leaving).
        public var judgedSeconds = 0.0
        public var rightSeconds = 0.0
        /// Engine transitions with no true transition to match: two make a flap.
        public var falseTransitions = 0
        /// False exits while the truth had the beacon inside.
        public var falseExitsDuringStays = 0
        /// True transitions the engine never made, and how many of them were enters.
        public var missed = 0
        public var missedEnters = 0
        /// Seconds from the true transition to the engine's event (exit latencies include the exit period); a
        /// true transition while the gateway was down counts from the end of the downtime.
        public var enterLatencies: [Double] = []
        public var exitLatencies: [Double] = []
        /// Latency as users feel it (issue 30): an enter counted from the moment the beacon crossed into the
        /// enter radius before it stayed at least 1 m inside it for the rest of its stay, an exit from the moment
        /// it was 1 m beyond the exit radius. Stays that only graze the boundary have none (they are judged by
        /// false transitions). `feltMissedEnters`/`feltMissedExits`: such transitions the detector never made.
        public var feltEnterLatencies: [Double] = []
        public var feltExitLatencies: [Double] = []
        public var feltMissedEnters = 0
        public var feltMissedExits = 0
    }

    /// A peer baseline's scores on the same stream (`BaselineDetector.Kind` names it).
    public struct Detector: Sendable, Equatable, PairScores {
        public var name: String
        public var pairs: [Pair]
    }

    public var observations: Int
    public var events: EventCounts
    public var restarts: Int
    public var evictions: UInt64 = 0
    public var pairs: [Pair] = []
    public var baselines: [Detector] = []
    /// The rules of `simulate --frontier` (`FrontierRule.family`), when asked for.
    public var frontier: [Detector] = []

    /// Nearest-rank percentile (p in 0...1) of values; nil when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank - 1, 0), sorted.count - 1)]
    }
}

/// Scores over (region, beacon) pairs, shared by the engine's summary and the baselines'.
public protocol PairScores {
    var pairs: [SimulationSummary.Pair] { get }
}

extension PairScores {
    public var rightFraction: Double {
        let judged = pairs.reduce(0) { $0 + $1.judgedSeconds }
        return judged > 0 ? pairs.reduce(0) { $0 + $1.rightSeconds } / judged : 1
    }
    public var falseTransitions: Int { pairs.reduce(0) { $0 + $1.falseTransitions } }
    public var falseExitsDuringStays: Int { pairs.reduce(0) { $0 + $1.falseExitsDuringStays } }
    /// Enter/exit pairs the truth did not have.
    public var flaps: Int { falseTransitions / 2 }
    public var missed: Int { pairs.reduce(0) { $0 + $1.missed } }
    public var enterLatencies: [Double] { pairs.flatMap(\.enterLatencies).sorted() }
    public var exitLatencies: [Double] { pairs.flatMap(\.exitLatencies).sorted() }
    /// Enter latencies of beacons advertising at `minimumRate` Hz or faster.
    public func enterLatencies(atLeast minimumRate: Double) -> [Double] {
        pairs.filter { $0.rate >= minimumRate }.flatMap(\.enterLatencies).sorted()
    }
    /// Felt enter latencies (see `Pair.feltEnterLatencies`) of beacons advertising at `minimumRate` Hz or faster.
    public func feltEnterLatencies(atLeast minimumRate: Double) -> [Double] {
        pairs.filter { $0.rate >= minimumRate }.flatMap(\.feltEnterLatencies).sorted()
    }
    public var feltExitLatencies: [Double] { pairs.flatMap(\.feltExitLatencies).sorted() }
    /// Felt enters of beacons at `minimumRate` Hz or faster the detector never made.
    public func feltMissedEnters(atLeast minimumRate: Double) -> Int {
        pairs.filter { $0.rate >= minimumRate }.reduce(0) { $0 + $1.feltMissedEnters }
    }
    public var feltMissedExits: Int { pairs.reduce(0) { $0 + $1.feltMissedExits } }
    /// Judged (region, beacon) pair-hours: a "beacon-hour" per region.
    public var beaconHours: Double { pairs.reduce(0) { $0 + $1.judgedSeconds } / 3_600 }
    public var falseTransitionsPerBeaconHour: Double {
        beaconHours > 0 ? Double(falseTransitions) / beaconHours : 0
    }
}
