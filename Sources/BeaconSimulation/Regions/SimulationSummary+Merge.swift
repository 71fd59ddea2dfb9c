import BeaconModel

extension SimulationSummary {
    /// Several runs (seeds, scenarios) as one: counts added, pairs (of the engine and of each baseline) pooled,
    /// so rates and percentiles are over all of them.
    public static func merged(_ runs: [SimulationSummary]) -> SimulationSummary {
        var result = SimulationSummary(observations: 0, events: EventCounts(), restarts: 0)
        for run in runs {
            result.observations += run.observations
            result.events.enter += run.events.enter
            result.events.exit += run.events.exit
            result.events.state += run.events.state
            result.events.seen += run.events.seen
            result.events.stale += run.events.stale
            result.events.away += run.events.away
            result.events.sighting += run.events.sighting
            result.restarts += run.restarts
            result.evictions += run.evictions
            result.pairs += run.pairs
            for detector in run.frontier {
                if let index = result.frontier.firstIndex(where: { $0.name == detector.name }) {
                    result.frontier[index].pairs += detector.pairs
                } else {
                    result.frontier.append(detector)
                }
            }
            for baseline in run.baselines {
                if let index = result.baselines.firstIndex(where: { $0.name == baseline.name }) {
                    result.baselines[index].pairs += baseline.pairs
                } else {
                    result.baselines.append(baseline)
                }
            }
        }
        return result
    }
}
