/// Runs a rooms scenario the way a site would: each gateway's reports through its own `RegionEngine` (the
/// gateway's tracker, filter and sighting publish policy), the sightings of all gateways merged in capture-time
/// order as the broker would deliver them (bounded skew: none in the simulation), and every room rule (the
/// arbiter and the baselines) fed the same sightings and a tick every second. Scores each rule against the
/// ground truth (`RoomScore`).
public struct RoomScenarioRun {
    public let scenario: RoomScenario
    public let simulator: RoomSimulator

    public init(_ scenario: RoomScenario) {
        self.scenario = scenario
        simulator = RoomSimulator(scenario)
    }

    /// The sightings every gateway would publish, merged in time order (ties by gateway order).
    public func sightings() -> [RoomSighting] {
        var all: [(RoomSighting, Int)] = []
        for (index, gateway) in scenario.plan.gateways.enumerated() {
            var engine = RegionEngine(
                settings: scenario.tracker, regions: [], distance: scenario.distanceModel,
                now: scenario.startTime)
            var nextTick = scenario.startTime + 1
            func take(_ events: [EngineEvent]) {
                for case let .sighting(event) in events {
                    if let sighting = RoomSighting(gatewayID: gateway.id, event: event) {
                        all.append((sighting, index))
                    }
                }
            }
            for observation in simulator.observations(gateway: index) {
                while nextTick <= observation.timestamp {
                    take(engine.advance(to: nextTick))
                    nextTick += 1
                }
                take(engine.process(observation))
            }
        }
        all.sort { ($0.0.time, $0.1) < ($1.0.time, $1.1) }
        return all.map(\.0)
    }

    /// The rules compared: the arbiter first, then the baselines.
    public func deciders() -> [any RoomDeciding] {
        let n = scenario.radio.pathLossExponent
        return [RoomArbiter(settings: scenario.arbiter)]
            + RoomBaseline.Kind.allCases.map { RoomBaseline($0, settings: scenario.arbiter, pathLossExponent: n) }
    }

    /// Runs every rule over the same sightings; `onChange` sees the arbiter's decisions in order.
    public func run(onChange: (RoomChange) -> Void = { _ in }) -> RoomSummary {
        let stream = sightings()
        var summary = RoomSummary(sightings: stream.count)
        for (ruleIndex, var decider) in deciders().enumerated() {
            var score = RoomScore(scenario: scenario, simulator: simulator)
            var next = 0
            var tick = scenario.startTime + 1
            let end = scenario.startTime + scenario.duration
            while tick <= end {
                while next < stream.count, stream[next].time <= tick {
                    for change in decider.process(stream[next]) {
                        score.record(change)
                        if ruleIndex == 0 { onChange(change) }
                    }
                    next += 1
                }
                for change in decider.advance(to: tick) {
                    score.record(change)
                    if ruleIndex == 0 { onChange(change) }
                }
                score.sample(at: tick, interval: 1) { decider.room(of: $0) }
                tick += 1
            }
            summary.rules.append(score.finish(name: decider.name))
        }
        return summary
    }
}
