import BeaconModel
import BeaconTracking

/// Collects what the engine (and, beside it, the peer baselines) did during a run and compares it with the
/// ground truth.
struct SimulationRecorder {
    struct PairKey: Hashable {
        var region: String
        var beaconID: String
    }

    /// What one detector (the engine or a baseline) did: its transitions and its time in the right state.
    struct DetectorLog {
        var transitions: [PairKey: [(time: Timestamp, kind: TruthTransition.Kind)]] = [:]
        var right: [PairKey: Double] = [:]
        var judged: [PairKey: Double] = [:]
    }

    let scenario: Scenario
    private var truthByPair: [PairKey: [TruthTransition]] = [:]
    /// Per pair, parallel to its truth: the time from which a user feels the transition (nil: a graze).
    private var feltStarts: [PairKey: [Timestamp?]] = [:]
    private var heardBeacons: Set<String> = []
    private var exitPeriods: [String: Double] = [:]
    private var rates: [String: Double] = [:]
    private var engineLog = DetectorLog()
    /// Per beacon id, its pairs' baseline detectors (one per kind) and their logs, indexed by kind.
    private var baselines: [String: [(key: PairKey, detectors: [BaselineDetector])]] = [:]
    private var baselineLogs = Array(repeating: DetectorLog(), count: BaselineDetector.Kind.allCases.count)
    /// Per beacon id, its pairs' `FrontierBank`s (`simulate --frontier`), and one log per frontier rule.
    private let frontierRules: [FrontierRule]
    private var banks: [String: [(key: PairKey, bank: FrontierBank)]] = [:]
    private var frontierLogs: [DetectorLog]
    private(set) var counts = SimulationSummary.EventCounts()
    private var restarts = 0

    /// `baselines: false` leaves the peer baselines out; `frontier` adds a detector per rule.
    init(
        scenario: Scenario, truth: [TruthTransition], baselines withBaselines: Bool = true,
        frontier: [FrontierRule] = [], peerLevels: [TeachPhase.Key: (enter: Double, exit: Double)] = [:]
    ) {
        self.scenario = scenario
        frontierRules = frontier
        frontierLogs = Array(repeating: DetectorLog(), count: frontier.count)
        for transition in truth {
            truthByPair[PairKey(region: transition.region, beaconID: transition.beaconID), default: []].append(
                transition)
        }
        let model = scenario.distanceModel
        for beacon in scenario.beacons { rates[beacon.beaconID] = beacon.rate }
        for rule in scenario.regions {
            guard let enter = rule.enter else { continue }
            exitPeriods[rule.name] = rule.exitPeriod
            let exit = rule.effectiveExit ?? enter.defaultExit
            for beacon in scenario.beacons
            where rule.match.matches(
                format: beacon.format, identifiers: beacon.identifiers, address: beacon.address,
                name: beacon.name)
            {
                let key = PairKey(region: rule.name, beaconID: beacon.beaconID)
                if truthByPair[key] == nil { truthByPair[key] = [] }
                guard let enterLevel = Self.level(enter, model: model, beacon: beacon),
                    let exitLevel = Self.level(exit, model: model, beacon: beacon)
                else { continue }
                feltStarts[key] = Self.feltStartTimes(
                    truthByPair[key] ?? [], beacon: beacon, scenario: scenario,
                    enterRadius: Self.radius(enterLevel, model: model, beacon: beacon),
                    exitRadius: Self.radius(exitLevel, model: model, beacon: beacon))
                if !frontier.isEmpty {
                    banks[beacon.beaconID, default: []].append(
                        (
                            key,
                            FrontierBank(
                                rules: frontier, enterLevel: enterLevel, exitLevel: exitLevel,
                                exitPeriod: rule.exitPeriod)
                        ))
                }
                guard withBaselines else { continue }
                let peer = peerLevels[TeachPhase.Key(region: rule.name, beaconID: beacon.beaconID)]
                let detectors = BaselineDetector.Kind.allCases.map {
                    BaselineDetector(
                        kind: $0, enterLevel: peer?.enter ?? enterLevel, exitLevel: peer?.exit ?? exitLevel,
                        exitTimeout: rule.exitPeriod)
                }
                baselines[beacon.beaconID, default: []].append((key, detectors))
            }
        }
    }

    private static func level(_ condition: RegionCondition, model: SimulationDistance, beacon: ScenarioBeacon)
        -> Double?
    {
        condition.rssiLevel(estimator: model, format: beacon.format, measuredPower: beacon.measuredPower)
    }

    /// The distance at which the beacon's true mean RSSI (with its attenuation) equals `level`.
    private static func radius(_ level: Double, model: SimulationDistance, beacon: ScenarioBeacon) -> Double {
        model.distance(rssi: level + beacon.attenuation, measuredPower: beacon.measuredPower, format: beacon.format)
            ?? 0
    }

    /// When users feel each true transition (issue 30), sampled every 50 ms like the truth. An enter: the beacon
    /// must come to rest at least 1 m inside the enter radius during the stay (a run of at least
    /// `feltRestSeconds` that deep; it may leave afterwards, as every stay ends by walking out), and the clock
    /// starts at the last moment before that run at which it was at or beyond the enter radius (the true enter
    /// when it was carried straight in). An exit: from the first moment after the true exit, before the next
    /// true enter, at which it is 1 m beyond the exit radius. Otherwise nil: a graze.
    static func feltStartTimes(
        _ truth: [TruthTransition], beacon: ScenarioBeacon, scenario: Scenario, enterRadius: Double,
        exitRadius: Double
    ) -> [Timestamp?] {
        let step = 0.05
        let origin = scenario.startTime
        return truth.enumerated().map { (index, transition) -> Timestamp? in
            let from = transition.time - origin
            let until = index + 1 < truth.count ? truth[index + 1].time - origin : scenario.duration
            if transition.kind == .exit {
                var t = from
                while t <= until {
                    if beacon.distance(at: t) >= exitRadius + 1 { return origin + t }
                    t += step
                }
                return nil
            }
            var lastOutside = from
            var deepSince: Double?
            var t = from
            while t <= until {
                let distance = beacon.distance(at: t)
                if distance <= enterRadius - 1 {
                    if deepSince == nil { deepSince = t }
                    if let since = deepSince, t - since >= feltRestSeconds { return origin + lastOutside }
                } else {
                    deepSince = nil
                    if distance >= enterRadius { lastOutside = t }
                }
                t += step
            }
            return nil
        }
    }

    /// How long a beacon must stay at least 1 m inside the enter radius for its enter to count as felt.
    static let feltRestSeconds = 10.0

    /// A report the gateway heard: feeds the baselines of its pairs.
    mutating func heard(_ observation: Observation) {
        heardBeacons.insert(observation.beaconID)
        if let rssi = observation.rssi, var pairs = banks[observation.beaconID] {
            var fired: [(Int, TruthTransition.Kind)] = []
            for index in pairs.indices {
                pairs[index].bank.observe(rssi: rssi, at: observation.timestamp, into: &fired)
                for (rule, kind) in fired {
                    frontierLogs[rule].transitions[pairs[index].key, default: []].append((observation.timestamp, kind))
                }
                fired.removeAll(keepingCapacity: true)
            }
            banks[observation.beaconID] = pairs
        }
        guard let rssi = observation.rssi, var pairs = baselines[observation.beaconID] else { return }
        for index in pairs.indices {
            for kind in pairs[index].detectors.indices {
                for transition in pairs[index].detectors[kind].observe(rssi: rssi, at: observation.timestamp) {
                    baselineLogs[kind].transitions[pairs[index].key, default: []].append(
                        (observation.timestamp, transition))
                }
            }
        }
        baselines[observation.beaconID] = pairs
    }

    mutating func restarted(at time: Timestamp) { restarts += 1 }

    mutating func record(_ event: EngineEvent) {
        switch event {
        case .sighting: counts.sighting += 1
        case let .presence(presence):
            switch presence.state {
            case .seen: counts.seen += 1
            case .stale: counts.stale += 1
            case .away: counts.away += 1
            }
        case let .region(region):
            switch region.kind {
            case .enter:
                counts.enter += 1
                engineLog.transitions[PairKey(region: region.region, beaconID: region.beaconID), default: []]
                    .append((region.time, .enter))
            case .exit:
                counts.exit += 1
                engineLog.transitions[PairKey(region: region.region, beaconID: region.beaconID), default: []]
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

    /// Whether the truth has the beacon inside at `time` (no exit delay): a stay.
    func trulyInside(_ key: PairKey, at time: Timestamp) -> Bool {
        var inside = false
        for transition in truthByPair[key] ?? [] where transition.time <= time { inside = transition.kind == .enter }
        return inside
    }

    /// Samples every detector's state at an `advance` tick (and fires the baselines' exit timeouts first).
    mutating func sample(at time: Timestamp, interval: Double, engineState: (String, String) -> RegionState) {
        for beaconID in baselines.keys {
            guard var pairs = baselines[beaconID] else { continue }
            for index in pairs.indices {
                for kind in pairs[index].detectors.indices {
                    if let transition = pairs[index].detectors[kind].advance(to: time) {
                        baselineLogs[kind].transitions[pairs[index].key, default: []].append((time, transition))
                    }
                }
            }
            baselines[beaconID] = pairs
        }
        var fired: [(Int, TruthTransition.Kind)] = []
        for beaconID in banks.keys {
            guard var pairs = banks[beaconID] else { continue }
            for index in pairs.indices {
                pairs[index].bank.advance(to: time, into: &fired)
                for (rule, kind) in fired {
                    frontierLogs[rule].transitions[pairs[index].key, default: []].append((time, kind))
                }
                fired.removeAll(keepingCapacity: true)
            }
            banks[beaconID] = pairs
        }
        for key in truthByPair.keys where heardBeacons.contains(key.beaconID) {
            let expected = expectedState(key, at: time)
            for pair in banks[key.beaconID] ?? [] where pair.key == key {
                for rule in frontierRules.indices {
                    frontierLogs[rule].judged[key, default: 0] += interval
                    if pair.bank.state(rule) == expected { frontierLogs[rule].right[key, default: 0] += interval }
                }
            }
            engineLog.judged[key, default: 0] += interval
            if engineState(key.region, key.beaconID) == expected { engineLog.right[key, default: 0] += interval }
            for (index, pair) in (baselines[key.beaconID] ?? []).enumerated() where pair.key == key {
                _ = index
                for kind in pair.detectors.indices {
                    baselineLogs[kind].judged[key, default: 0] += interval
                    if pair.detectors[kind].state == expected { baselineLogs[kind].right[key, default: 0] += interval }
                }
            }
        }
    }

    func summary(observations: Int, counters: TrackerCounters) -> SimulationSummary {
        var summary = SimulationSummary(observations: observations, events: counts, restarts: restarts)
        summary.pairs = score(engineLog)
        summary.baselines = BaselineDetector.Kind.allCases.enumerated().map { index, kind in
            SimulationSummary.Detector(name: kind.rawValue, pairs: score(baselineLogs[index]))
        }
        summary.frontier = frontierRules.enumerated().map { index, rule in
            SimulationSummary.Detector(name: rule.name, pairs: score(frontierLogs[index]))
        }
        summary.evictions = counters.evictions
        return summary
    }

    /// The first time at or after `time` at which the gateway could hear anything: a true transition while the
    /// gateway is down (between a restart and the end of its downtime) is measured from when it is back.
    func observable(_ time: Timestamp) -> Timestamp {
        for offset in scenario.restarts {
            let down = scenario.startTime + offset
            if time >= down, time < down + scenario.restartDowntime { return down + scenario.restartDowntime }
        }
        return time
    }

    /// Matches a detector's transitions to the truth, pair by pair (same kind, in order, no earlier than 10 s
    /// before the true one).
    private func score(_ log: DetectorLog) -> [SimulationSummary.Pair] {
        var result: [SimulationSummary.Pair] = []
        for (key, truth) in truthByPair.sorted(by: {
            ($0.key.region, $0.key.beaconID) < ($1.key.region, $1.key.beaconID)
        }) {
            var pair = SimulationSummary.Pair(region: key.region, beaconID: key.beaconID)
            pair.rate = rates[key.beaconID] ?? 0
            pair.judgedSeconds = log.judged[key] ?? 0
            pair.rightSeconds = log.right[key] ?? 0
            let engine = log.transitions[key] ?? []
            var matched = Array(repeating: false, count: engine.count)
            var floor = -Double.infinity
            let felt = feltStarts[key] ?? []
            var enteredThisStay = true
            for (position, transition) in truth.enumerated() {
                let feltStart = position < felt.count ? felt[position] : nil
                var matchedNow = false
                if let index = engine.indices.first(where: {
                    !matched[$0] && engine[$0].kind == transition.kind
                        && engine[$0].time >= max(floor, transition.time - 10)
                }) {
                    matched[index] = true
                    matchedNow = true
                    let latency = engine[index].time - observable(transition.time)
                    let feltLatency = feltStart.map { engine[index].time - observable($0) }
                    if transition.kind == .enter {
                        pair.enterLatencies.append(latency)
                        if let feltLatency { pair.feltEnterLatencies.append(feltLatency) }
                    } else {
                        pair.exitLatencies.append(latency)
                        if let feltLatency { pair.feltExitLatencies.append(feltLatency) }
                    }
                    floor = engine[index].time
                } else {
                    pair.missed += 1
                    if transition.kind == .enter { pair.missedEnters += 1 }
                    if feltStart != nil {
                        if transition.kind == .enter {
                            pair.feltMissedEnters += 1
                        } else if enteredThisStay {
                            // A stay the detector never entered has no exit to make (its missed enter counts).
                            pair.feltMissedExits += 1
                        }
                    }
                }
                if transition.kind == .enter { enteredThisStay = matchedNow }
            }
            pair.falseTransitions = matched.filter { !$0 }.count
            pair.falseExitsDuringStays =
                engine.indices.filter {
                    !matched[$0] && engine[$0].kind == .exit && trulyInside(key, at: engine[$0].time)
                }.count
            result.append(pair)
        }
        return result
    }
}
