import BeaconModel
import BeaconTracking

/// A link's constant radio terms (`RealisticRadio`): its placement offset and its advertising channels' offsets.
/// They never average away over a stay; a teach on the same link sees them, and only them, again.
public struct LinkConstants: Sendable, Equatable {
    public var placement: Double
    public var channelOffsets: [Double]

    public init(placement: Double, channelOffsets: [Double]) {
        self.placement = placement
        self.channelOffsets = channelOffsets
    }

    /// The link's constant offset from the log-distance law, dB: the placement plus the channels' mean (a hopping
    /// scanner mixes the channels equally, a dwelling one spends equal time on each).
    public var offset: Double {
        placement + (channelOffsets.isEmpty ? 0 : channelOffsets.reduce(0, +) / Double(channelOffsets.count))
    }
}

/// The teaching phase of a region scenario (issue 43; docs/scenarios.md, "The teach phase"): before the scored
/// part, for every (region, beacon) pair the installer holds the beacon still at the region's boundary and then
/// at a typical inside spot for `seconds` each, on the same radio. The teach sees the link's constant terms
/// (`LinkConstants`: the same placement and channel offsets as the scored part) with a posture, shadowing,
/// fading, blocking and loss drawn for the teach alone; the scored stays draw theirs afresh.
public struct TeachPhase: Sendable, Equatable {
    /// Seconds the installer holds the beacon at each spot (issue 43: a region's teach takes at most 60 s, so
    /// 30 s at each of its two spots).
    public var seconds: Double

    public static let defaultSeconds = 30.0
    /// The longest teach per spot the simulator accepts.
    public static let maximumSeconds = 60.0
    /// Where inside the installer holds the beacon, as a fraction of the boundary's distance from the gateway:
    /// half way in (1.5 m for a 3 m region, where the scenarios' walkers rest at 1-1.5 m).
    public static let insideFraction = 0.5

    /// Postures the installer's hold goes through at each spot (1: one posture for the whole hold, the model of
    /// issue 43; 4: turning slowly through a full circle, a quarter of the hold facing each way).
    public var postures: Int
    /// Times the installer teaches a spot again when its quality figure (`TeachQuality`) asks for more, as the
    /// teach's reply tells them to; the last hold is kept (what the daemon stores). 0: every spot is held once.
    public var retries: Int
    /// What the quality figure judges a hold by when deciding a retry (`TeachQuality.Checks`).
    public var checks: TeachQuality.Checks

    public init(
        seconds: Double = TeachPhase.defaultSeconds, postures: Int = 1, retries: Int = 0,
        checks: TeachQuality.Checks = .standard
    ) {
        self.seconds = seconds
        self.postures = max(1, postures)
        self.retries = max(0, retries)
        self.checks = checks
    }

    /// One (region, beacon) pair.
    public struct Key: Hashable, Sendable {
        public var region: String
        public var beaconID: String
        public init(region: String, beaconID: String) {
            self.region = region
            self.beaconID = beaconID
        }
    }

    /// What each pair's teach recorded (`TaughtRegionLink`), and, for the oracle, the same link taught exactly.
    public struct Result: Sendable {
        public var taught: [Key: TaughtRegionLink] = [:]
        /// The best possible teach: each spot's level is the true mean there plus the link's constant offset,
        /// exactly (no posture, no noise).
        public var oracle: [Key: TaughtRegionLink] = [:]
        /// The link's constant offset per pair (what the oracle was told).
        public var offsets: [Key: Double] = [:]
        /// Where the boundary is (metres from the gateway) per pair.
        public var boundaryDistance: [Key: Double] = [:]
    }

    /// One pair's teach as heard: the reports at each spot, and what the oracle is told.
    public struct Recording: Sendable {
        public var key: Key
        /// The beacon's advertising rate, Hz.
        public var rate: Double
        /// The reports (RSSI dBm, capture time s) held at the boundary, then inside, in the order heard.
        public var boundary: [(rssi: Int, at: Double)]
        public var inside: [(rssi: Int, at: Double)]
        /// The oracle's link: each spot's true mean plus the link's constant offset.
        public var oracle: TaughtRegionLink
        public var offset: Double
        public var boundaryDistance: Double
    }

    /// Teaches every (region with an enter condition, matching beacon) pair of the scenario.
    public func teach(_ scenario: Scenario) -> Result {
        var result = Result()
        for recording in recordings(scenario) {
            let key = recording.key
            let spots = [recording.boundary, recording.inside].map { reports -> TaughtLevel? in
                var recorder = LevelRecorder()
                for report in reports { recorder.add(rssi: report.rssi, at: report.at) }
                return recorder.summary
            }
            result.taught[key] = TaughtRegionLink(boundary: spots[0], inside: spots[1])
            result.oracle[key] = recording.oracle
            result.offsets[key] = recording.offset
            result.boundaryDistance[key] = recording.boundaryDistance
        }
        return result
    }

    /// The reports each (region with an enter condition, matching beacon) pair's teach hears, pair by pair.
    public func recordings(_ scenario: Scenario) -> [Recording] {
        let simulator = ScenarioSimulator(scenario)
        let model = scenario.distanceModel
        var result: [Recording] = []
        var constants: [Int: LinkConstants] = [:]
        for (regionIndex, rule) in scenario.regions.enumerated() {
            guard let enter = rule.enter else { continue }
            for (index, beacon) in scenario.beacons.enumerated()
            where rule.match.matches(
                format: beacon.format, identifiers: beacon.identifiers, address: beacon.address, name: beacon.name)
            {
                guard
                    let level = enter.rssiLevel(
                        estimator: model, format: beacon.format, measuredPower: beacon.measuredPower),
                    let boundary = model.distance(
                        rssi: level + beacon.attenuation, measuredPower: beacon.measuredPower, format: beacon.format)
                else { continue }
                let link = constants[index] ?? simulator.linkConstants(of: beacon, index: index)
                constants[index] = link
                let inside = boundary * Self.insideFraction
                var spots: [[(rssi: Int, at: Double)]] = []
                for (spot, distance) in [boundary, inside].enumerated() {
                    var heard: [(rssi: Int, at: Double)] = []
                    for attempt in 0...retries {
                        // A retry is a new hold: its own posture, shadowing, blocking and loss.
                        heard = simulator.teachRecording(
                            of: beacon, index: index, distance: distance, seconds: seconds, constants: link,
                            stream: UInt64(regionIndex * 2 + spot) | UInt64(attempt) << 32, postures: postures
                        ).compactMap { observation in observation.rssi.map { ($0, observation.timestamp) } }
                        var recorder = LevelRecorder()
                        for report in heard { recorder.add(rssi: report.rssi, at: report.at) }
                        if TeachQuality(spot: spot == 0 ? .boundary : .inside, level: recorder.summary, checks: checks)
                            .isGood
                        {
                            break
                        }
                    }
                    spots.append(heard)
                }
                let insideLevel =
                    model.meanRSSI(atDistance: inside, measuredPower: beacon.measuredPower) - beacon.attenuation
                let oracle = TaughtRegionLink(
                    boundary: TaughtLevel(level: level + link.offset, spread: 0, reports: 0, seconds: 0),
                    inside: TaughtLevel(level: insideLevel + link.offset, spread: 0, reports: 0, seconds: 0))
                result.append(
                    Recording(
                        key: Key(region: rule.name, beaconID: beacon.beaconID), rate: beacon.rate,
                        boundary: spots[0], inside: spots[1], oracle: oracle, offset: link.offset,
                        boundaryDistance: boundary))
            }
        }
        return result
    }
}

extension ScenarioSimulator {
    /// The constant terms of a beacon's link as its scored stream draws them (zero placement and the radio's
    /// fixed channel offsets for the independent model, which has no constant terms of its own).
    public func linkConstants(of beacon: ScenarioBeacon, index: Int) -> LinkConstants {
        guard scenario.radio.model != .independent else {
            return LinkConstants(placement: 0, channelOffsets: scenario.radio.channelOffsets)
        }
        var random = SimulationRandom(seed: scenario.seed, stream: index)
        var constants: LinkConstants?
        // The same draws as `observations(of:index:)`, dropouts first, so the constants are the scored stream's.
        let dropouts = beacon.dropouts + randomDropouts(of: beacon, random: &random)
        _ = observationsRealistic(of: beacon, dropouts: dropouts, random: &random, constants: &constants)
        return constants ?? LinkConstants(placement: 0, channelOffsets: [])
    }

    /// The reports a teach hears: the beacon held still `distance` m from the gateway for `seconds`, on its own
    /// link (`constants`), with the rest of the radio drawn from a stream of its own (`stream`: which spot of
    /// which region). No scripted or random dropouts: the installer holds an advertising device.
    public func teachRecording(
        of beacon: ScenarioBeacon, index: Int, distance: Double, seconds: Double, constants: LinkConstants,
        stream: UInt64, postures: Int = 1
    ) -> [Observation] {
        var teach = scenario
        teach.duration = seconds
        teach.restarts = []
        teach.seed = scenario.seed ^ (0x7EAC_4000_0000_0000 &+ stream &* 0x9E37_79B9_7F4A_7C15)
        var held = beacon
        // One waypoint per posture at the same spot: the radio draws a posture per part of the path.
        held.path = (0..<max(1, postures)).map {
            Waypoint(time: seconds * Double($0) / Double(max(1, postures)), x: distance)
        }
        held.dropouts = []
        held.randomDropouts = nil
        let simulator = ScenarioSimulator(teach)
        guard scenario.radio.model != .independent else { return simulator.observations(of: held, index: index) }
        var random = SimulationRandom(seed: teach.seed, stream: index)
        var given: LinkConstants? = constants
        return simulator.observationsRealistic(of: held, dropouts: [], random: &random, constants: &given)
    }
}

extension ScenarioRun {
    /// The scenario untaught, then taught by `phase` and told its links' constant offsets exactly (the oracle),
    /// all on the same report stream and truth: the untaught engine's summary, with beside its peer baselines
    /// the detectors `beaconbridge-taught`, `beaconbridge-oracle` and each peer given the taught levels
    /// (`<peer>+taught`). `onEvent` sees the taught engine's events.
    public func runTaught(_ phase: TeachPhase, onEvent: (EngineEvent) -> Void = { _ in }) -> SimulationSummary {
        let taughtLinks = phase.teach(scenario)
        var summary = run()
        let taught = run(taught: TaughtRegions(scenario: scenario, links: taughtLinks.taught), onEvent: onEvent)
        let oracle = run(
            baselines: false, taught: TaughtRegions(scenario: scenario, links: taughtLinks.oracle, peersTaught: false))
        summary.baselines += [
            SimulationSummary.Detector(name: Self.taughtName, pairs: taught.pairs),
            SimulationSummary.Detector(name: Self.oracleName, pairs: oracle.pairs),
        ]
        summary.baselines += taught.baselines.map {
            SimulationSummary.Detector(name: $0.name + "+taught", pairs: $0.pairs)
        }
        return summary
    }

    public static let taughtName = "beaconbridge-taught"
    public static let oracleName = "beaconbridge-oracle"
}
