import BeaconFormats
import BeaconModel
import BeaconRooms

/// Scores one room rule against the ground truth of a rooms scenario, per person:
/// - wrong-room time: seconds (sampled every second after the warm-up) in which the rule's room differs from
///   the true room (undecided counts as wrong; `not_home` is right only when the person is outside every room);
/// - false switches: changes of the decided room that do not follow a true change: for every true change (into
///   a room, or out to `not_home`) the first decision into that room made after it (up to `matchGrace` seconds
///   after the true stay ends) is the right one, every other change is false (a flap A→B→A is two);
/// - room-change latency: for every true change into a room where the person then stays at least
///   `minimumStay` seconds, the seconds until the rule first shows that room; a stay the rule never shows is
///   missed;
/// - confidently wrong time: seconds in which the rule shows a named room (not `unknown`, `not_home` or
///   undecided) that is not the true room;
/// - dark-room time (scenarios with outages): seconds in which the person's true room is dark (all its gateways
///   down), and of those the seconds the rule shows another named room (Bermuda users' #764).
public struct RoomScore {
    struct Segment {
        var start: Double
        var end: Double
        var room: String?
    }

    let scenario: RoomScenario
    var segments: [String: [Segment]] = [:]
    var changes: [String: [RoomChange]] = [:]
    var judged: [String: Double] = [:]
    var wrong: [String: Double] = [:]
    var confidentlyWrong = 0.0
    var dark = 0.0
    var darkElsewhere = 0.0
    /// Where the wrong time falls (docs/rooms.md, "Where the wrong-room time comes from"), over all people.
    var breakdown = RoomSummary.WrongTime()
    /// Per person: the start of the true stay the last sample fell in, and whether the rule has shown that
    /// stay's room since it began.
    var stayShown: [String: (start: Double, shown: Bool)] = [:]

    /// The true stays with the oracle rooms when given (for `wrongMeanFloor`; the geometry room of the
    /// "ambiguous" class comes from it too, else is computed).
    let oracle: RoomOracle?

    init(scenario: RoomScenario, simulator: RoomSimulator) {
        self.init(scenario: scenario, segments: Self.segments(scenario, simulator), oracle: nil)
    }

    /// With the true stays computed once per run (`segments`), shared by every rule scored on it.
    init(scenario: RoomScenario, segments: [String: [Segment]], oracle: RoomOracle?) {
        self.scenario = scenario
        self.segments = segments
        self.oracle = oracle
    }

    /// Every person's true stays, sampled every 0.1 s.
    static func segments(_ scenario: RoomScenario, _ simulator: RoomSimulator) -> [String: [Segment]] {
        var segments: [String: [Segment]] = [:]
        for person in scenario.people {
            var list: [Segment] = []
            var t = 0.0
            while t <= scenario.duration {
                let room = simulator.trueRoom(of: person, at: t)
                if let last = list.last, last.room == room {
                    list[list.count - 1].end = t
                } else {
                    list.append(Segment(start: t, end: t, room: room))
                }
                t += 0.1
            }
            segments[person.beaconID] = list
        }
        return segments
    }

    mutating func record(_ change: RoomChange) {
        guard change.hadRoom else { return }
        changes[change.beaconID, default: []].append(change)
    }

    mutating func sample(at time: Timestamp, interval: Double, decided: (String) -> String??) {
        let t = time - scenario.startTime
        guard t > scenario.warmup else { return }
        let second = Int(t.rounded())
        let whole = Double(second) == t
        let darkRooms = scenario.darkRooms(at: time)
        for (index, person) in scenario.people.enumerated() {
            guard let list = segments[person.beaconID], let truth = list.last(where: { $0.start <= t }) else {
                continue
            }
            judged[person.beaconID, default: 0] += interval
            let shown = decided(person.beaconID)
            let right: Bool
            switch shown {
            case .none: right = false
            case let .some(room): right = room == truth.room
            }
            if !right { wrong[person.beaconID, default: 0] += interval }
            var named: String?
            if case let .some(.some(room)) = shown, room != RoomArbiter.unknownRoom { named = room }
            let elsewhere = named != nil && named != truth.room
            if elsewhere { confidentlyWrong += interval }
            if let room = truth.room, darkRooms.contains(room) {
                dark += interval
                if elsewhere { darkElsewhere += interval }
            }
            var stay = stayShown[person.beaconID] ?? (truth.start, false)
            if stay.start != truth.start { stay = (truth.start, false) }
            let geometry =
                whole
                ? oracle?.room(.geometry, person: index, second: second) ?? loudestRoom(of: person, at: t)
                : loudestRoom(of: person, at: t)
            if geometry != truth.room { breakdown.ambiguousSeconds += interval }
            if !right, let oracle, whole {
                if oracle.room(.mean(window: 0), person: index, second: second) != truth.room {
                    breakdown.wrongMeanFloor += interval
                }
                if oracle.room(.fixed, person: index, second: second) != truth.room {
                    breakdown.wrongFixedFloor += interval
                }
            }
            if right {
                stay.shown = true
            } else if geometry != truth.room {
                breakdown.wrongAmbiguous += interval
            } else if truth.end - truth.start < scenario.minimumStay {
                breakdown.wrongInTransit += interval
            } else if !stay.shown {
                breakdown.wrongCatchingUp += interval
            } else {
                breakdown.wrongRelapse += interval
            }
            stayShown[person.beaconID] = stay
        }
    }

    /// The room of the gateway with the loudest noise-free mean signal (path loss, walls, receiver offsets
    /// calibrated away) at the person's position: what a rule with perfect averaging would show; nil (the true
    /// `not_home`) outside every room.
    func loudestRoom(of person: ScenarioBeacon, at t: Double) -> String? {
        let position = person.position(at: t)
        guard scenario.plan.room(x: position.x, y: position.y) != nil else { return nil }
        return RoomOracle.loudest(
            RoomOracle.geometryLevels(scenario, person, x: position.x, y: position.y), scenario.plan)
    }

    func finish(name: String) -> RoomSummary.Rule {
        var rule = RoomSummary.Rule(name: name)
        for person in scenario.people {
            let id = person.beaconID
            let list = segments[id] ?? []
            let made = changes[id] ?? []
            var used = Set<Int>()
            for segment in list.dropFirst() {
                let startTime = scenario.startTime + segment.start
                let limit = scenario.startTime + segment.end + scenario.matchGrace
                if let index = made.indices.first(where: {
                    !used.contains($0) && made[$0].time >= startTime && made[$0].time <= limit
                        && made[$0].to == segment.room
                }) {
                    used.insert(index)
                }
                guard segment.room != nil, segment.end - segment.start >= scenario.minimumStay else { continue }
                // Latency: when the rule first shows this room inside the stay.
                let before = made.last { $0.time < startTime }
                if before?.to == segment.room && before != nil {
                    rule.latencies.append(0)
                } else if let first = made.first(where: {
                    $0.time >= startTime && $0.time <= scenario.startTime + segment.end
                        && $0.to == segment.room
                }) {
                    rule.latencies.append(first.time - startTime)
                } else {
                    rule.missed += 1
                }
                rule.trueChanges += 1
            }
            rule.beacons.append(
                RoomSummary.Beacon(
                    beaconID: id, judgedSeconds: judged[id] ?? 0,
                    wrongSeconds: wrong[id] ?? 0, falseSwitches: made.count - used.count))
            rule.falseSwitches += made.count - used.count
            rule.switches += made.count
            rule.judgedSeconds += judged[id] ?? 0
            rule.wrongSeconds += wrong[id] ?? 0
        }
        rule.wrongTime = breakdown
        rule.confidentlyWrongSeconds = confidentlyWrong
        rule.darkSeconds = dark
        rule.darkElsewhereSeconds = darkElsewhere
        return rule
    }
}

/// The figures of one rooms run (or of several merged), per rule.
public struct RoomSummary: Sendable, Equatable {
    /// One beacon's share of a rule's figures (single runs only; merged summaries drop them).
    public struct Beacon: Sendable, Equatable {
        public var beaconID: String
        public var judgedSeconds: Double
        public var wrongSeconds: Double
        public var falseSwitches: Int
    }

    /// Where a rule's wrong seconds fall, each wrong second in exactly one class (in this order):
    /// - `wrongAmbiguous`: the noise-free loudest gateway is not in the true room (never outside every room):
    ///   a rule comparing signals is wrong there even with perfect averaging;
    /// - `wrongInTransit`: in a true stay shorter than the minimum stay (passing through);
    /// - `wrongCatchingUp`: the rule has not shown the true room yet since the stay began (its latency);
    /// - `wrongRelapse`: the rule had shown the true room during this stay and left it (a flap, a lost room).
    /// `ambiguousSeconds` is the judged time at such positions, right or wrong. Across the classes,
    /// `wrongMeanFloor` is the wrong time at which `oracle-mean` is wrong as well (the part a rule that picks the
    /// loudest room could not avoid even with perfect averaging; the rest is what the rule loses beyond that).
    public struct WrongTime: Sendable, Equatable {
        public var wrongAmbiguous = 0.0
        public var wrongInTransit = 0.0
        public var wrongCatchingUp = 0.0
        public var wrongRelapse = 0.0
        public var ambiguousSeconds = 0.0
        public var wrongMeanFloor = 0.0
        public var wrongFixedFloor = 0.0
        public init() {}
        mutating func add(_ other: WrongTime) {
            wrongAmbiguous += other.wrongAmbiguous
            wrongInTransit += other.wrongInTransit
            wrongCatchingUp += other.wrongCatchingUp
            wrongRelapse += other.wrongRelapse
            ambiguousSeconds += other.ambiguousSeconds
            wrongMeanFloor += other.wrongMeanFloor
            wrongFixedFloor += other.wrongFixedFloor
        }
    }

    public struct Rule: Sendable, Equatable {
        public var name: String
        public var judgedSeconds = 0.0
        public var wrongSeconds = 0.0
        public var switches = 0
        public var falseSwitches = 0
        public var trueChanges = 0
        public var missed = 0
        public var latencies: [Double] = []
        public var beacons: [Beacon] = []
        public var wrongTime = WrongTime()
        /// Seconds showing a named room (not `unknown`, `not_home` or undecided) other than the true one.
        public var confidentlyWrongSeconds = 0.0
        /// Seconds in which the person's true room was dark (every gateway of it down), and of those the seconds
        /// the rule showed another named room.
        public var darkSeconds = 0.0
        public var darkElsewhereSeconds = 0.0

        public init(name: String) { self.name = name }

        public var wrongShare: Double { judgedSeconds > 0 ? wrongSeconds / judgedSeconds : 0 }
        public var confidentlyWrongShare: Double { judgedSeconds > 0 ? confidentlyWrongSeconds / judgedSeconds : 0 }
        /// nil without dark-room time (no outage, or nobody in a dark room).
        public var darkElsewhereShare: Double? { darkSeconds > 0 ? darkElsewhereSeconds / darkSeconds : nil }
        public var beaconHours: Double { judgedSeconds / 3_600 }
        public var falseSwitchesPerHour: Double { beaconHours > 0 ? Double(falseSwitches) / beaconHours : 0 }
        public var latencyP50: Double? { SimulationSummary.percentile(latencies, 0.5) }
        public var latencyP95: Double? { SimulationSummary.percentile(latencies, 0.95) }
    }

    public var sightings: Int
    /// The deployable rules: the arbiter, then the baselines.
    public var rules: [Rule] = []
    /// The analysis rows (`RoomOracleRule`, `oracle-mean+arbiter`): not rules, the floor they are measured
    /// against.
    public var oracles: [Rule] = []
    /// Self-calibration of each run (merged summaries keep every run's).
    public var calibration: [RoomCalibrationRun] = []
    /// The training phase's rooms of each run (merged summaries keep every run's).
    public var training: [RoomTrainingRun.Report] = []

    public init(sightings: Int, rules: [Rule] = [], oracles: [Rule] = []) {
        self.sightings = sightings
        self.rules = rules
        self.oracles = oracles
    }

    /// Runs merged rule by rule (same rule names in the same order), so shares and percentiles are over all.
    public static func merged(_ runs: [RoomSummary]) -> RoomSummary {
        var result = RoomSummary(sightings: runs.reduce(0) { $0 + $1.sightings })
        for run in runs {
            merge(run.rules, into: &result.rules)
            merge(run.oracles, into: &result.oracles)
            result.calibration += run.calibration
            result.training += run.training
        }
        return result
    }

    static func merge(_ rules: [Rule], into list: inout [Rule]) {
        for rule in rules {
            if let index = list.firstIndex(where: { $0.name == rule.name }) {
                list[index].judgedSeconds += rule.judgedSeconds
                list[index].wrongSeconds += rule.wrongSeconds
                list[index].switches += rule.switches
                list[index].falseSwitches += rule.falseSwitches
                list[index].trueChanges += rule.trueChanges
                list[index].missed += rule.missed
                list[index].latencies += rule.latencies
                list[index].wrongTime.add(rule.wrongTime)
                list[index].confidentlyWrongSeconds += rule.confidentlyWrongSeconds
                list[index].darkSeconds += rule.darkSeconds
                list[index].darkElsewhereSeconds += rule.darkElsewhereSeconds
            } else {
                var rule = rule
                rule.beacons = []
                list.append(rule)
            }
        }
    }
}
