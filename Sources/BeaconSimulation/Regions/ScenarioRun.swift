import BeaconModel
import BeaconTracking

/// Runs a scenario through a `RegionEngine` the way the daemon would: every observation is processed,
/// `advance(to:)` is called every `advance_interval_s`, state changes go to a `RegionStateStore` after every
/// call, and at each restart time the engine is rebuilt from that store.
public struct ScenarioRun {
    public let scenario: Scenario
    public let observations: [Observation]
    public let truth: [TruthTransition]

    public init(_ scenario: Scenario) {
        self.scenario = scenario
        let simulator = ScenarioSimulator(scenario)
        observations = simulator.observations()
        truth = simulator.groundTruth()
    }

    private init(scenario: Scenario, observations: [Observation], truth: [TruthTransition]) {
        self.scenario = scenario
        self.observations = observations
        self.truth = truth
    }

    /// The same report stream and ground truth judged with other region rules, which must keep the regions'
    /// names, matches and conditions (the truth depends on those only), e.g. another `enter_margin_db`.
    public func with(regions: [RegionRule]) -> ScenarioRun {
        var other = scenario
        other.regions = regions
        return ScenarioRun(scenario: other, observations: observations, truth: truth)
    }

    /// Runs the scenario; `onEvent` sees every event in order. Returns the accuracy summary, with the peer
    /// baselines beside the engine unless `baselines` is false, and a detector per `frontier` rule.
    public func run(
        store: InMemoryRegionStateStore = InMemoryRegionStateStore(), baselines: Bool = true,
        frontier: [FrontierRule] = [], taught: TaughtRegions? = nil, onEvent: (EngineEvent) -> Void = { _ in }
    ) -> SimulationSummary {
        let start = scenario.startTime
        let model = scenario.distanceModel
        let engineRegions = taught?.rules ?? scenario.regions
        var engine = RegionEngine(settings: scenario.settings, regions: engineRegions, distance: model, now: start)
        var recorder = SimulationRecorder(
            scenario: scenario, truth: truth, baselines: baselines, frontier: frontier,
            peerLevels: taught?.peerLevels ?? [:])
        var restarts = scenario.restarts.map { start + $0 }[...]
        var tick = 1
        var nextObservation = 0

        func deliver(_ events: [EngineEvent]) {
            for event in events {
                let event = taught?.scenarioEvent(event) ?? event
                recorder.record(event)
                onEvent(event)
            }
            let changes = engine.takeStateChanges()
            if !changes.isEmpty { try? store.saveRegionStates(changes) }
        }

        let end = start + scenario.duration
        while true {
            let tickTime = start + Double(tick) * scenario.advanceInterval
            let observationTime =
                nextObservation < observations.count ? observations[nextObservation].timestamp : .infinity
            let time = min(tickTime, observationTime)
            if time > end { break }
            if let restart = restarts.first, restart <= time {
                restarts.removeFirst()
                deliver([])
                // Down: nothing is heard and no time passes for the engine until it is rebuilt.
                let back = restart + scenario.restartDowntime
                while nextObservation < observations.count, observations[nextObservation].timestamp < back {
                    nextObservation += 1
                }
                while start + Double(tick) * scenario.advanceInterval < back { tick += 1 }
                let rows = (try? store.loadRegionStates()) ?? []
                engine = RegionEngine(
                    settings: scenario.settings, regions: engineRegions, distance: model,
                    restoring: rows, now: back)
                recorder.restarted(at: restart)
                continue
            }
            if observationTime <= tickTime {
                let observation = observations[nextObservation]
                nextObservation += 1
                recorder.heard(observation)
                deliver(engine.process(observation))
            } else {
                tick += 1
                deliver(engine.advance(to: tickTime))
                recorder.sample(at: tickTime, interval: scenario.advanceInterval) {
                    engine.state(of: $1, in: taught?.engineName(region: $0, beaconID: $1) ?? $0) ?? .unknown
                }
            }
        }
        deliver(engine.advance(to: end))
        return recorder.summary(observations: observations.count, counters: engine.counters)
    }
}
