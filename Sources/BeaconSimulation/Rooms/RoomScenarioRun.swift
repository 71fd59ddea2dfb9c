import BeaconModel
import BeaconRooms
import BeaconTracking

/// Runs a rooms scenario the way a site would: each gateway's reports through its own `RegionEngine` (the
/// gateway's tracker, filter and sighting publish policy), the sightings of all gateways merged in capture-time
/// order as the broker would deliver them (bounded skew: none in the simulation), and every room rule (the
/// arbiter and the baselines) fed the same sightings and a tick every second. Scores each rule against the
/// ground truth (`RoomScore`).
public struct RoomScenarioRun {
    public let scenario: RoomScenario
    public let simulator: RoomSimulator
    /// Whether `run` adds the classifier's ablation rows to the oracle rows (`classifierAblations`).
    public var classifierAblations = false
    /// The row whose decisions `run` hands to `onChange` (`simulate --events`); nil: the arbiter's (the first row).
    public var eventsRow: String?

    /// `scenario` is realised for its seed first (`RoomScenario.realized`: the gateways' own terms drawn).
    public init(_ scenario: RoomScenario) {
        self.scenario = scenario.realized()
        simulator = RoomSimulator(self.scenario)
    }

    /// One run's world, computed once and shared by every rule scored on it: the sightings every gateway would
    /// publish, merged in time order (ties by gateway order), the links' true levels (`RoomOracle`) and the true
    /// stays.
    public struct World: Sendable {
        public var sightings: [RoomSighting]
        public var oracle: RoomOracle
        var truth: [String: [RoomScore.Segment]]
        /// What the gateways hear of each other's identity beacons, and self-calibration over the run.
        public var identity: [IdentityReport]
        public var calibration: RoomCalibrationRun
        /// The training phase before the scored stream (its fingerprints and vectors).
        public var training: RoomTrainingRun
    }

    public func world() -> World {
        let generated = simulator.world()
        let identity = simulator.identityReports()
        let calibration = RoomCalibrationRun(scenario: scenario, reports: identity)
        return World(
            sightings: Self.sightings(scenario, generated.observations), oracle: generated.oracle,
            truth: RoomScore.segments(scenario, simulator), identity: identity, calibration: calibration,
            training: RoomTrainingRun(scenario: scenario, offsets: calibration.steps.last?.offsets ?? [:]))
    }

    /// What every gateway would publish of these reports (by gateway index): each gateway's `RegionEngine`
    /// from the scenario's start with a tick every second, the sightings merged in time order (ties by gateway
    /// order). A gateway that is down (`RoomScenario.Outage`) publishes nothing and starts afresh (a new engine)
    /// when it is back.
    static func sightings(_ scenario: RoomScenario, _ observations: [[Observation]]) -> [RoomSighting] {
        var all: [(RoomSighting, Int)] = []
        for (index, gateway) in scenario.plan.gateways.enumerated() where index < observations.count {
            func engine(from now: Timestamp) -> RegionEngine {
                RegionEngine(settings: scenario.tracker, regions: [], distance: scenario.distanceModel, now: now)
            }
            var current = engine(from: scenario.startTime)
            let restarts = scenario.outages.filter { $0.gateway == gateway.id }.map { scenario.startTime + $0.to }
                .sorted()
            var nextRestart = 0
            var nextTick = scenario.startTime + 1
            /// The gateway's events at `time`: none while it is down, a new engine once it is back.
            func take(at time: Timestamp, _ step: (inout RegionEngine) -> [EngineEvent]) {
                guard !scenario.isDown(gateway.id, at: time) else { return }
                while nextRestart < restarts.count, restarts[nextRestart] <= time {
                    current = engine(from: restarts[nextRestart])
                    nextRestart += 1
                }
                for case let .sighting(event) in step(&current) {
                    if let sighting = RoomSighting(gatewayID: gateway.id, event: event) {
                        all.append((sighting, index))
                    }
                }
            }
            for observation in observations[index] {
                while nextTick <= observation.timestamp {
                    let tick = nextTick
                    take(at: tick) { $0.advance(to: tick) }
                    nextTick += 1
                }
                take(at: observation.timestamp) { $0.process(observation) }
            }
        }
        all.sort { ($0.0.time, $0.1) < ($1.0.time, $1.1) }
        return all.map(\.0)
    }

    /// The sightings every gateway would publish, merged in time order (ties by gateway order).
    public func sightings() -> [RoomSighting] { world().sightings }

    /// The rules compared: the arbiter first, then the baselines.
    public func deciders() -> [any RoomDeciding] {
        let n = scenario.radio.pathLossExponent
        return [RoomArbiter(settings: scenario.arbiter)]
            + RoomBaseline.Kind.allCases.map { RoomBaseline($0, settings: scenario.arbiter, pathLossExponent: n) }
    }

    /// Runs every rule over the same sightings, then the oracle rows (`RoomOracle.tableKinds`, and
    /// `oracle-mean+arbiter` / `oracle-fixed+arbiter`: the arbiter with the scenario's settings fed the links'
    /// true levels / long-run levels once a second); `onChange` sees the arbiter's decisions in order.
    public func run(onChange: (RoomChange) -> Void = { _ in }) -> RoomSummary {
        run(in: world(), onChange: onChange)
    }

    /// `run` on a world already computed; `calibrationRows` adds the rules without the configured offsets
    /// (`uncalibrated`, and the baselines so), with self-calibration's (`calibrated`), and with those and the
    /// training phase's fingerprints (`trained`), the same deciding by the fingerprint margin rule (`fp-margin`),
    /// the plain k-NN fingerprint rule (`knn`), and the calibration's and training's figures.
    public func run(
        in world: World, calibrationRows: Bool = true, onChange: (RoomChange) -> Void = { _ in }
    ) -> RoomSummary {
        var summary = RoomSummary(sightings: world.sightings.count)
        // Every row's decisions go to `onChange` only if it is the row asked for (`eventsRow`, else the first).
        func scoreRow(
            _ rule: some RoomDeciding, name: String? = nil, first: Bool = false, stream: [RoomSighting]
        ) -> RoomSummary.Rule {
            let wanted = eventsRow.map { $0 == (name ?? rule.name) } ?? first
            return score(rule, name: name, stream: stream, in: world, onChange: wanted ? onChange : { _ in })
        }
        for (ruleIndex, decider) in deciders().enumerated() {
            summary.rules.append(scoreRow(decider, first: ruleIndex == 0, stream: world.sightings))
        }
        if calibrationRows {
            var bare = scenario.arbiter
            bare.receiverOffsets = [:]
            let n = scenario.radio.pathLossExponent
            summary.rules.append(
                scoreRow(RoomArbiter(settings: bare), name: "uncalibrated", stream: world.sightings))
            for kind in RoomBaseline.Kind.allCases {
                summary.rules.append(
                    scoreRow(
                        RoomBaseline(kind, settings: bare, pathLossExponent: n), name: kind.rawValue + "-uncalibrated",
                        stream: world.sightings))
            }
            summary.rules.append(
                scoreRow(
                    SelfCalibratedArbiter(settings: scenario.arbiter, steps: world.calibration.steps),
                    stream: world.sightings))
            summary.calibration = [world.calibration]
            // `trained`: the `calibrated` row's arbiter given the training's fingerprints before the stream.
            summary.rules.append(
                scoreRow(
                    SelfCalibratedArbiter(
                        settings: scenario.arbiter, steps: world.calibration.steps,
                        fingerprints: world.training.book),
                    stream: world.sightings))
            // `fp-margin`: the same with the fingerprint margin rule deciding (the classifier off, `fingerprint_rule`
            // on, the scenario's other keys), whatever the file selects for `trained` (docs/rooms.md, "Session 29").
            var margin = scenario.arbiter
            margin.classifier.enabled = false
            margin.classifier.rule = true
            summary.rules.append(
                scoreRow(
                    SelfCalibratedArbiter(
                        settings: margin, steps: world.calibration.steps, fingerprints: world.training.book,
                        name: "fp-margin"),
                    stream: world.sightings))
            // `knn`: the plain fingerprint rule on the training's per-second vectors, calibrated alike.
            summary.rules.append(
                scoreRow(
                    RoomNearestFingerprints(
                        gatewayIDs: scenario.plan.gateways.map(\.id), vectors: world.training.vectors,
                        steps: world.calibration.steps, awayTimeout: scenario.arbiter.awayTimeout),
                    stream: world.sightings))
            summary.training = world.training.reports
            if classifierAblations { summary.oracles += classifierAblations(in: world) }
        }
        for kind in RoomOracle.tableKinds {
            summary.oracles.append(scoreRow(RoomOracleRule(kind, oracle: world.oracle), stream: []))
        }
        // The fingerprint floor: the training's book, then an ideal walk of every room.
        for fingerprints in [
            RoomFingerprintOracle(oracle: world.oracle, training: world.training),
            RoomFingerprintOracle(oracle: world.oracle),
        ] {
            for match in RoomFingerprintOracle.Match.allCases {
                summary.oracles.append(scoreRow(RoomOracleRule(match, oracle: fingerprints), stream: []))
            }
        }
        // The evidence floor (`oracle-fp-felt`): `oracle-fp` told the posture of the stay and the blocking too.
        summary.oracles.append(
            scoreRow(
                RoomOracleRule(
                    .absolute,
                    oracle: RoomFingerprintOracle(oracle: world.oracle, training: world.training, evidence: .felt)),
                stream: []))
        for fixed in [false, true] {
            summary.oracles.append(
                scoreRow(
                    RoomArbiter(settings: scenario.arbiter),
                    name: fixed ? "oracle-fixed+arbiter" : "oracle-mean+arbiter",
                    stream: world.oracle.sightings(fixed: fixed)))
        }
        return summary
    }

    /// One rule over a stream of sightings with a tick every second, scored against the world's truth; the
    /// gateways' outages are announced to it at their start and end (`RoomDeciding.gatewaysOffline`: only
    /// BeaconBridge's rules act on them).
    public func score(
        _ rule: some RoomDeciding, name: String? = nil, stream: [RoomSighting], in world: World,
        onChange: (RoomChange) -> Void = { _ in }
    ) -> RoomSummary.Rule {
        var decider = rule
        var score = RoomScore(scenario: scenario, segments: world.truth, oracle: world.oracle)
        var next = 0
        var tick = scenario.startTime + 1
        let end = scenario.startTime + scenario.duration
        let announcements = scenario.offlineAnnouncements
        var nextAnnouncement = 0
        func take(_ changes: [RoomChange]) {
            for change in changes {
                score.record(change)
                onChange(change)
            }
        }
        /// Gateways' availability up to `time`, to the rules that have the notion (BeaconBridge's).
        func announce(upTo time: Timestamp) {
            while nextAnnouncement < announcements.count, announcements[nextAnnouncement].time <= time {
                let announcement = announcements[nextAnnouncement]
                take(decider.gatewaysOffline(announcement.gateways, now: announcement.time))
                nextAnnouncement += 1
            }
        }
        while tick <= end {
            while next < stream.count, stream[next].time <= tick {
                announce(upTo: stream[next].time)
                take(decider.process(stream[next]))
                next += 1
            }
            announce(upTo: tick)
            take(decider.advance(to: tick))
            score.sample(at: tick, interval: 1) { decider.room(of: $0) }
            tick += 1
        }
        return score.finish(name: name ?? decider.name)
    }
}
