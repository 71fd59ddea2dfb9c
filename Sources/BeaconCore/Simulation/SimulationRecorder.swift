/// Collects what the engine did during a run and compares it with the ground truth.
struct SimulationRecorder {
    struct PairKey: Hashable {
        var region: String
        var beaconID: String
    }

    let scenario: Scenario
    private var truthByPair: [PairKey: [TruthTransition]] = [:]
    private var engineTransitions: [PairKey: [(time: Timestamp, kind: TruthTransition.Kind)]] = [:]
    private var heardBeacons: Set<String> = []
    private var exitPeriods: [String: Double] = [:]
    private var right: [PairKey: Double] = [:]
    private var judged: [PairKey: Double] = [:]
    private(set) var counts = SimulationSummary.EventCounts()
    private var restarts = 0

    init(scenario: Scenario, truth: [TruthTransition]) {
        self.scenario = scenario
        for transition in truth {
            truthByPair[PairKey(region: transition.region, beaconID: transition.beaconID), default: []].append(transition)
        }
        for rule in scenario.regions where rule.enter != nil {
            exitPeriods[rule.name] = rule.exitPeriod
            for beacon in scenario.beacons
            where rule.match.matches(format: beacon.format, identifiers: beacon.identifiers, address: beacon.address,
                                     name: beacon.name) {
                let key = PairKey(region: rule.name, beaconID: beacon.beaconID)
                if truthByPair[key] == nil { truthByPair[key] = [] }
            }
        }
    }

    mutating func heard(_ beaconID: String) { heardBeacons.insert(beaconID) }
    mutating func restarted(at time: Timestamp) { restarts += 1 }

    mutating func record(_ event: EngineEvent) {
        switch event {
        case .sighting: counts.sighting += 1
        case let .presence(presence):
            if presence.state == .seen { counts.seen += 1 } else { counts.away += 1 }
        case let .region(region):
            switch region.kind {
            case .enter:
                counts.enter += 1
                engineTransitions[PairKey(region: region.region, beaconID: region.beaconID), default: []]
                    .append((region.time, .enter))
            case .exit:
                counts.exit += 1
                engineTransitions[PairKey(region: region.region, beaconID: region.beaconID), default: []]
                    .append((region.time, .exit))
            case .state: counts.state += 1
            }
        }
    }

    /// The state a correct engine should show at `time`: the truth, with exits delayed by the exit period.
    func expectedState(_ key: PairKey, at time: Timestamp) -> RegionState {
        var state = RegionState.outside
        let period = exitPeriods[key.region] ?? 0
        for transition in truthByPair[key] ?? [] {
            switch transition.kind {
            case .enter where transition.time <= time: state = .inside
            case .exit where transition.time + period <= time: state = .outside
            default: break
            }
        }
        return state
    }

    mutating func sample(at time: Timestamp, interval: Double, engineState: (String, String) -> RegionState) {
        for key in truthByPair.keys where heardBeacons.contains(key.beaconID) {
            judged[key, default: 0] += interval
            if engineState(key.region, key.beaconID) == expectedState(key, at: time) { right[key, default: 0] += interval }
        }
    }

    func summary(observations: Int, counters: TrackerCounters) -> SimulationSummary {
        var summary = SimulationSummary(observations: observations, events: counts, restarts: restarts)
        for (key, truth) in truthByPair.sorted(by: { ($0.key.region, $0.key.beaconID) < ($1.key.region, $1.key.beaconID) }) {
            var pair = SimulationSummary.Pair(region: key.region, beaconID: key.beaconID)
            pair.judgedSeconds = judged[key] ?? 0
            pair.rightSeconds = right[key] ?? 0
            let engine = engineTransitions[key] ?? []
            var matched = Array(repeating: false, count: engine.count)
            var floor = -Double.infinity
            for transition in truth {
                if let index = engine.indices.first(where: { !matched[$0] && engine[$0].kind == transition.kind
                                                            && engine[$0].time >= max(floor, transition.time - 10) }) {
                    matched[index] = true
                    let latency = engine[index].time - transition.time
                    if transition.kind == .enter { pair.enterLatencies.append(latency) } else { pair.exitLatencies.append(latency) }
                    floor = engine[index].time
                } else {
                    pair.missed += 1
                }
            }
            pair.falseTransitions = matched.filter { !$0 }.count
            summary.pairs.append(pair)
        }
        summary.evictions = counters.evictions
        return summary
    }
}
