import BeaconModel

/// The multi-gateway world of a `RoomScenario`: every person's beacon advertises on one schedule, and every
/// gateway hears each advertisement through its own link of the scenario's correlated radio (`RealisticRadio`):
/// the `measured` radio by default (issue 43, session 27: every report on an advertising channel drawn at random,
/// one shadowing process per channel, 3.3 dB over 2.1 s, fading 1.65 dB, per-channel offsets σ 2.9 dB, 5-60 s
/// body blocking, 0.8 s loss bursts), or the `pessimistic` radio (`"radio": {"model": "pessimistic"}` or
/// `simulate --radio pessimistic`: the model before issue 30, one shadowing process over 5 s and a 10 s channel
/// dwell at this scanner's own phase, drawn exactly as before the measured radio came to rooms); either with the
/// sensitivity curve, plus the loss of every wall the line of sight crosses and the gateway's receiver offset.
/// The measured radio's constant terms (`RealisticRadio.placementSigma`, `postureSigma`) are not drawn here:
/// rooms draw placement and posture through `SpatialField` (the file's `spatial_bias`), which would count them
/// twice. Silences of the beacon itself (scripted or random dropouts) are heard by no gateway. With
/// `spatialBias` (the `measured` variant, the default), each link also carries a bias that depends on the
/// beacon's position and a posture term per stay (`SpatialField`). Links are independent of each other (their
/// shadowing is not cross-correlated: a simplification that makes neighbouring gateways disagree more often than
/// real ones do, not less).
public struct RoomSimulator: Sendable {
    public let scenario: RoomScenario

    public init(_ scenario: RoomScenario) { self.scenario = scenario }

    /// What gateway `gatewayIndex` hears, in time order (nothing while it is down: `RoomScenario.Outage`).
    public func observations(gateway gatewayIndex: Int) -> [Observation] {
        var all: [(Observation, Int)] = []
        for (index, person) in scenario.people.enumerated() {
            let schedule = advertisements(of: person, index: index)
            let heard = link(person, index: index, gateway: gatewayIndex, schedule: schedule).observations
            all += scenario.heard(heard, by: scenario.plan.gateways[gatewayIndex].id).map { ($0, index) }
        }
        all.sort { ($0.0.timestamp, $0.1) < ($1.0.timestamp, $1.1) }
        return all.map(\.0)
    }

    /// Every gateway's reports (as `observations(gateway:)`, by gateway index) and, from the same draws, the
    /// true slowly varying level of every link at every advertisement (`RoomOracle`; the radio's, drawn whether
    /// the gateway is up or down).
    public func world() -> (observations: [[Observation]], oracle: RoomOracle) {
        var heard: [[(Observation, Int)]] = Array(repeating: [], count: scenario.plan.gateways.count)
        var links: [[RoomOracle.Link]] = []
        for (index, person) in scenario.people.enumerated() {
            let schedule = advertisements(of: person, index: index)
            var perGateway: [RoomOracle.Link] = []
            for gatewayIndex in scenario.plan.gateways.indices {
                let run = link(person, index: index, gateway: gatewayIndex, schedule: schedule)
                let id = scenario.plan.gateways[gatewayIndex].id
                heard[gatewayIndex] += scenario.heard(run.observations, by: id).map { ($0, index) }
                var drawn = RoomOracle.Link(times: schedule, levels: run.levels, fixed: run.fixed)
                drawn.postures = run.postures
                drawn.blocking = run.blocking
                perGateway.append(drawn)
            }
            links.append(perGateway)
        }
        let observations = heard.map { list in
            list.sorted { ($0.0.timestamp, $0.1) < ($1.0.timestamp, $1.1) }.map(\.0)
        }
        return (observations, RoomOracle(scenario: scenario, links: links))
    }

    /// The true room of a person at scenario time `t` (nil: outside every room, i.e. `not_home`).
    public func trueRoom(of person: ScenarioBeacon, at t: Double) -> String? {
        let position = person.position(at: t)
        return scenario.plan.room(x: position.x, y: position.y)
    }

    /// Scenario times at which the beacon advertises (1/rate plus advDelay), minus its own silences.
    func advertisements(of person: ScenarioBeacon, index: Int) -> [Double] {
        var random = SimulationRandom(seed: scenario.seed, stream: index * 64)
        var dropouts = person.dropouts
        if let spec = person.randomDropouts {
            var t = random.exponential(mean: spec.meanInterval)
            while t < scenario.duration {
                let length = random.uniform(spec.minLength, spec.maxLength)
                dropouts.append(Dropout(start: t, duration: length))
                t += length + random.exponential(mean: spec.meanInterval)
            }
        }
        let interval = 1 / person.rate
        let delay = scenario.radio.realistic.advDelayMax
        var result: [Double] = []
        result.reserveCapacity(Int(scenario.duration * person.rate) + 1)
        var t = random.uniform() * interval
        while t < scenario.duration {
            let now = t
            t += interval + random.uniform() * delay
            if dropouts.contains(where: { $0.contains(now) }) { continue }
            result.append(now)
        }
        return result
    }

    /// One gateway-beacon link: the reports this gateway receives of these advertisements, and at every
    /// advertisement (heard or not) the link's true slowly varying level: everything in the report's RSSI but
    /// the fast fading, with the link's per-channel offsets averaged over the channels; and the link's fixed
    /// bias (those averaged channel offsets plus the receiver offset) (`RoomOracle`). With `channelMixing` (the
    /// measured radio) a report's channel is random, so the slow level is the mean over the channels of each
    /// channel's shadowing plus its offset: what a perfect averager of the reports converges to while the slow
    /// terms hold; without it (pessimistic) it is the one shadowing process plus the mean offset, as before.
    /// Also the link's per-stay terms, as drawn: its posture term per segment of the path and the body-blocking
    /// episodes (`RoomOracle.Kind.felt`); handing them over draws nothing.
    func link(
        _ person: ScenarioBeacon, index: Int, gateway gatewayIndex: Int, schedule: [Double]
    ) -> (observations: [Observation], levels: [Double], fixed: Double, postures: [Double], blocking: BlockingEpisodes)
    {
        let gateway = scenario.plan.gateways[gatewayIndex]
        let radio = scenario.radio
        let params = radio.realistic
        let model = scenario.distanceModel
        var random = SimulationRandom(seed: scenario.seed, stream: index * 64 + gatewayIndex + 1)
        // The position-dependent link bias and the person's postures (`SpatialField`; none with `spatial_bias` off).
        let field = SpatialField(scenario)
        let postures = field.postures(person: person, stream: index, gateways: scenario.plan.gateways.count)
        let offsets =
            radio.channelOffsets.isEmpty
            ? (0..<3).map { _ in params.channelOffsetSigma * random.gaussian() }
            : radio.channelOffsets
        // Scanners do not rotate channels in step: each starts its dwell cycle at its own phase (drawn on either
        // radio; only the pessimistic one dwells).
        let phase = random.uniform() * radio.channelDwell * Double(offsets.count)
        var blocks = BlockingEpisodes(params.blocking, duration: scenario.duration, random: &random)
        let drawnBlocks = blocks
        var loss = LossChannel(loss: person.loss, burst: params.lossBurst, share: params.lossBurstShare)
        loss.start(random: &random)
        let sigma = person.sigma ?? params.shadowingSigma
        var shadowing = sigma * random.gaussian()
        // The measured radio: one shadowing process per channel (the first is `shadowing`) and a random channel
        // per report. The pessimistic radio draws neither, so its streams are those of before, to the last bit.
        let mixing = params.channelMixing
        var channelShadowing: [Double] =
            mixing ? (1..<max(offsets.count, 1)).map { _ in sigma * random.gaussian() } : []
        var previous: (t: Double, x: Double, y: Double)?
        let meanOffset = offsets.isEmpty ? 0 : offsets.reduce(0, +) / Double(offsets.count)
        var result: [Observation] = []
        result.reserveCapacity(schedule.count)
        var levels: [Double] = []
        levels.reserveCapacity(schedule.count)
        for t in schedule {
            let position = person.position(at: t)
            if let previous {
                let dx = position.x - previous.x
                let dy = position.y - previous.y
                let moved = (dx * dx + dy * dy).squareRoot()
                let rho = params.shadowingCorrelation(elapsed: t - previous.t, moved: moved)
                shadowing = rho * shadowing + max(0, 1 - rho * rho).squareRoot() * sigma * random.gaussian()
                for channel in channelShadowing.indices {
                    channelShadowing[channel] =
                        rho * channelShadowing[channel] + max(0, 1 - rho * rho).squareRoot() * sigma * random.gaussian()
                }
                loss.step(elapsed: t - previous.t, random: &random)
            }
            previous = (t, position.x, position.y)
            // A hopping scanner's channel (measured) is drawn here, as the region simulator does; a dwelling one's
            // (pessimistic) follows from the time below.
            let mixedChannel = mixing ? min(Int(random.uniform() * Double(offsets.count)), offsets.count - 1) : 0
            let fading = params.fadingSigma * random.gaussian()
            let lost = loss.lost(random: &random)
            let heardDraw = random.uniform()
            let blocked = blocks.depth(at: t)
            let dx = position.x - gateway.x
            let dy = position.y - gateway.y
            let distance = max((dx * dx + dy * dy).squareRoot(), 0.1)
            let walls = scenario.plan.wallLoss(fromX: gateway.x, y: gateway.y, toX: position.x, y: position.y)
            let channel = mixing ? mixedChannel : radio.channel(at: t + phase, count: offsets.count)
            let shadow = mixing && channel > 0 ? channelShadowing[channel - 1] : shadowing
            // The slow level's shadowing: the one process (pessimistic), or the mean over the channels (measured).
            let slowShadowing =
                mixing ? (shadowing + channelShadowing.reduce(0, +)) / Double(channelShadowing.count + 1) : shadowing
            let mean = model.meanRSSI(atDistance: distance, measuredPower: person.measuredPower)
            // (The report's sum in its original order, so the world is the same to the last bit.)
            let spatial =
                field.bias(gateway: gatewayIndex, x: position.x, y: position.y)
                + postures[min(person.segment(at: t), postures.count - 1)][gatewayIndex]
            let signal = mean - person.attenuation - walls + shadow + offsets[channel] + fading - blocked + spatial
            levels.append(
                mean - person.attenuation - walls + slowShadowing - blocked + meanOffset + gateway.receiverOffset
                    + spatial)
            let received =
                1 / (1 + ElementaryMath.exp(-(signal - radio.noiseFloor) / max(params.sensitivityWidth, 1e-9)))
            guard !lost, heardDraw < received else { continue }
            let rssi = (signal + gateway.receiverOffset).rounded()
            result.append(
                Observation(
                    timestamp: scenario.startTime + t, beaconID: person.beaconID, format: person.format,
                    identifiers: person.identifiers, address: person.address,
                    addressType: .publicDevice, rssi: Int(min(max(rssi, -126), 20)),
                    measuredPower: person.measuredPower, name: person.name))
        }
        return (result, levels, meanOffset + gateway.receiverOffset, postures.map { $0[gatewayIndex] }, drawnBlocks)
    }
}
