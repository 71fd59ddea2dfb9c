import BeaconModel

extension ScenarioSimulator {
    /// One beacon's reports through the measured or pessimistic radio (`RealisticRadio` documents the terms). Every random term
    /// is drawn at every advertisement, heard or not, so the shadowing's correlation runs through losses.
    func observationsRealistic(
        of beacon: ScenarioBeacon, dropouts: [Dropout],
        random: inout SimulationRandom
    ) -> [Observation] {
        var constants: LinkConstants?
        return observationsRealistic(of: beacon, dropouts: dropouts, random: &random, constants: &constants)
    }

    /// The same, with the link's constant terms: when `constants` is nil on entry they are drawn (as always, so
    /// the stream does not change) and returned in it; when it is set, the stream uses them instead of its own
    /// draws (the teach phase: the same link, a posture and fading drawn afresh).
    func observationsRealistic(
        of beacon: ScenarioBeacon, dropouts: [Dropout],
        random: inout SimulationRandom, constants: inout LinkConstants?
    ) -> [Observation] {
        let radio = scenario.radio
        let params = radio.realistic
        let model = scenario.distanceModel
        var offsets =
            radio.channelOffsets.isEmpty
            ? (0..<3).map { _ in params.channelOffsetSigma * random.gaussian() }
            : radio.channelOffsets
        var blocks = BlockingEpisodes(params.blocking, duration: scenario.duration, random: &random)
        var loss = LossChannel(loss: beacon.loss, burst: params.lossBurst, share: params.lossBurstShare)
        let interval = 1 / beacon.rate
        var result: [Observation] = []
        result.reserveCapacity(Int(scenario.duration * beacon.rate * (1 - beacon.loss)) + 16)
        var t = random.uniform() * interval
        var previous: (t: Double, x: Double, y: Double)?
        let shadowingSigma = beacon.sigma ?? params.shadowingSigma
        var shadowing = shadowingSigma * random.gaussian()
        // The measured radio: one shadowing process per channel (the first is `shadowing`), a constant placement
        // offset, a posture offset per waypoint segment. The pessimistic radio draws none of these, so its
        // streams stay those of before issue 30.
        var channelShadowing: [Double] =
            params.channelMixing ? (1..<offsets.count).map { _ in shadowingSigma * random.gaussian() } : []
        var placement = params.placementSigma > 0 ? params.placementSigma * random.gaussian() : 0
        if let given = constants, given.channelOffsets.count == offsets.count {
            placement = given.placement
            offsets = given.channelOffsets
        } else {
            constants = LinkConstants(placement: placement, channelOffsets: offsets)
        }
        let postures =
            params.postureSigma > 0 ? (0...beacon.path.count).map { _ in params.postureSigma * random.gaussian() } : []
        loss.start(random: &random)
        while t < scenario.duration {
            let position = beacon.position(at: t)
            if let previous {
                let dx = position.x - previous.x
                let dy = position.y - previous.y
                let moved = (dx * dx + dy * dy).squareRoot()
                let rho = params.shadowingCorrelation(elapsed: t - previous.t, moved: moved)
                let innovation = (max(0, 1 - rho * rho)).squareRoot() * shadowingSigma
                shadowing = rho * shadowing + innovation * random.gaussian()
                for index in channelShadowing.indices {
                    channelShadowing[index] = rho * channelShadowing[index] + innovation * random.gaussian()
                }
                loss.step(elapsed: t - previous.t, random: &random)
            }
            previous = (t, position.x, position.y)
            var channel = radio.channel(at: t, count: offsets.count)
            var shadow = shadowing
            if params.channelMixing {
                channel = min(Int(random.uniform() * Double(offsets.count)), offsets.count - 1)
                if channel > 0, channel - 1 < channelShadowing.count { shadow = channelShadowing[channel - 1] }
            }
            let posture = postures.isEmpty ? 0 : postures[beacon.segment(at: t)]
            let fading = params.fadingSigma * random.gaussian()
            let lost = loss.lost(random: &random)
            let heardDraw = random.uniform()
            let blocked = blocks.depth(at: t)
            let distance = max((position.x * position.x + position.y * position.y).squareRoot(), 0.1)
            let rssi =
                model.meanRSSI(atDistance: distance, measuredPower: beacon.measuredPower) - beacon.attenuation
                + placement + posture + shadow + offsets[channel] + fading - blocked
            let received = 1 / (1 + ElementaryMath.exp(-(rssi - radio.noiseFloor) / max(params.sensitivityWidth, 1e-9)))
            let now = t
            t += interval + random.uniform() * params.advDelayMax
            guard !lost, heardDraw < received, !dropouts.contains(where: { $0.contains(now) }) else { continue }
            result.append(observation(of: beacon, at: now, rssi: rssi.rounded()))
        }
        return result
    }
}

/// A Gilbert-Elliott loss channel in continuous time: a bad state (mean `burst` s, `share` of the time) that
/// loses everything, and a good state whose loss makes the long-run mean equal `loss`. When `loss` is smaller
/// than `share`, the bad state's share shrinks to `loss` and the good state loses nothing.
struct LossChannel {
    let goodLoss: Double
    let meanBad: Double
    let meanGood: Double
    let share: Double
    var bad = false

    init(loss: Double, burst: Double, share requested: Double) {
        share = burst > 0 ? min(max(requested, 0), loss) : 0
        goodLoss = share < 1 ? max(0, (loss - share) / (1 - share)) : 0
        meanBad = burst
        meanGood = share > 0 ? burst * (1 - share) / share : .infinity
    }

    mutating func start(random: inout SimulationRandom) {
        bad = share > 0 && random.uniform() < share
    }

    /// Advances the state by `elapsed` seconds (the exact two-state Markov transition over that time).
    mutating func step(elapsed: Double, random: inout SimulationRandom) {
        guard share > 0, meanBad > 0 else { return }
        let rate = 1 / meanBad + 1 / meanGood
        let settle = ElementaryMath.exp(-rate * elapsed)
        let pBad = bad ? share + (1 - share) * settle : share * (1 - settle)
        bad = random.uniform() < pBad
    }

    mutating func lost(random: inout SimulationRandom) -> Bool {
        let draw = random.uniform()
        return bad || draw < goodLoss
    }
}
