import BeaconModel
import BeaconTracking

/// Produces a scenario's report stream and its ground truth, deterministically from the scenario's seed.
///
/// With the measured radio (the default) or the pessimistic one see `RealisticRadio` and `observationsRealistic`. With the
/// independent model each beacon advertises `rate` times a second (±10 % jitter); each advertisement is lost with probability
/// `loss`, or during a scripted or random dropout, or when its RSSI falls below the noise floor. RSSI is the
/// log-distance mean at the beacon's true distance plus Gaussian shadowing of `sigma` dB (plus the scanner's
/// current channel offset, when configured), rounded to whole dBm.
public struct ScenarioSimulator: Sendable {
    public let scenario: Scenario

    public init(_ scenario: Scenario) { self.scenario = scenario }

    /// All observations of all beacons, in time order (ties by beacon order).
    public func observations() -> [Observation] {
        var all: [(Observation, Int)] = []
        for (index, beacon) in scenario.beacons.enumerated() {
            all += observations(of: beacon, index: index).map { ($0, index) }
        }
        all.sort { ($0.0.timestamp, $0.1) < ($1.0.timestamp, $1.1) }
        return all.map(\.0)
    }

    func observations(of beacon: ScenarioBeacon, index: Int) -> [Observation] {
        var random = SimulationRandom(seed: scenario.seed, stream: index)
        let dropouts = beacon.dropouts + randomDropouts(of: beacon, random: &random)
        if scenario.radio.model != .independent {
            return observationsRealistic(of: beacon, dropouts: dropouts, random: &random)
        }
        let model = scenario.distanceModel
        let sigma = beacon.sigma ?? scenario.radio.sigma
        let interval = 1 / beacon.rate
        var result: [Observation] = []
        result.reserveCapacity(Int(scenario.duration * beacon.rate * (1 - beacon.loss)) + 16)
        var t = random.uniform() * interval
        while t < scenario.duration {
            defer { t += interval * random.uniform(0.9, 1.1) }
            let lost = random.uniform() < beacon.loss
            let shadowing = sigma * random.gaussian()
            guard !lost, !dropouts.contains(where: { $0.contains(t) }) else { continue }
            let mean = model.meanRSSI(atDistance: beacon.distance(at: t), measuredPower: beacon.measuredPower)
            let rssi = (mean - beacon.attenuation + shadowing + scenario.radio.channelOffset(at: t)).rounded()
            guard rssi >= scenario.radio.noiseFloor else { continue }
            result.append(observation(of: beacon, at: t, rssi: rssi))
        }
        return result
    }

    func observation(of beacon: ScenarioBeacon, at t: Double, rssi: Double) -> Observation {
        Observation(
            timestamp: scenario.startTime + t, beaconID: beacon.beaconID, format: beacon.format,
            identifiers: beacon.identifiers, address: beacon.address, addressType: .publicDevice,
            rssi: Int(min(max(rssi, -126), 20)), measuredPower: beacon.measuredPower, name: beacon.name,
            fields: beacon.reportsMotion ? ["moving": .bool(beacon.isMoving(at: t))] : [:])
    }

    func randomDropouts(of beacon: ScenarioBeacon, random: inout SimulationRandom) -> [Dropout] {
        guard let spec = beacon.randomDropouts else { return [] }
        var result: [Dropout] = []
        var t = random.exponential(mean: spec.meanInterval)
        while t < scenario.duration {
            let length = random.uniform(spec.minLength, spec.maxLength)
            result.append(Dropout(start: t, duration: length))
            t += length + random.exponential(mean: spec.meanInterval)
        }
        return result
    }

    /// Ground truth for every (region with an enter condition, matching beacon) pair: the transitions a
    /// noiseless, lag-free engine would make. Inside when the true mean RSSI rises above the enter level,
    /// outside when it falls below the exit level (the same hysteresis as the engine), sampled every 50 ms. The
    /// true mean includes a beacon's constant `attenuation` but none of the random terms (shadowing, channels,
    /// fading, body blocking).
    /// An `enter` at time 0 means the beacon starts inside.
    public func groundTruth() -> [TruthTransition] {
        let model = scenario.distanceModel
        var result: [TruthTransition] = []
        for rule in scenario.regions {
            guard let enter = rule.enter else { continue }
            let exit = rule.effectiveExit ?? enter.defaultExit
            for beacon in scenario.beacons
            where rule.match.matches(
                format: beacon.format, identifiers: beacon.identifiers, address: beacon.address,
                name: beacon.name)
            {
                guard let enterLevel = level(enter, model: model, beacon: beacon),
                    let exitLevel = level(exit, model: model, beacon: beacon)
                else { continue }
                var inside = false
                var t = 0.0
                while t <= scenario.duration {
                    let mean =
                        model.meanRSSI(atDistance: beacon.distance(at: t), measuredPower: beacon.measuredPower)
                        - beacon.attenuation
                    if !inside, mean > enterLevel {
                        inside = true
                        result.append(
                            TruthTransition(
                                region: rule.name, beaconID: beacon.beaconID,
                                time: scenario.startTime + t, kind: .enter))
                    } else if inside, mean < exitLevel {
                        inside = false
                        result.append(
                            TruthTransition(
                                region: rule.name, beaconID: beacon.beaconID,
                                time: scenario.startTime + t, kind: .exit))
                    }
                    t += 0.05
                }
            }
        }
        return result
    }

    private func level(_ condition: RegionCondition, model: SimulationDistance, beacon: ScenarioBeacon) -> Double? {
        condition.rssiLevel(estimator: model, format: beacon.format, measuredPower: beacon.measuredPower)
    }
}

/// A true region transition of the simulation.
public struct TruthTransition: Sendable, Equatable {
    public enum Kind: String, Sendable { case enter, exit }
    public var region: String
    public var beaconID: String
    public var time: Timestamp
    public var kind: Kind
}
