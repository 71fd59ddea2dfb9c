import BeaconModel
import BeaconTracking

/// The region rules a run's engine uses when its links are taught, and the levels its peer baselines use: one
/// rule per (region, beacon) pair, matching that beacon alone, with the taught enter and exit levels
/// (`TaughtRegionLink.levels`) as `.rssi` conditions, as the daemon sets each membership's levels from its
/// teach. The scoring keeps the scenario's own regions (the truth and the felt radii depend on them only).
public struct TaughtRegions: Sendable {
    /// The engine's rules.
    public var rules: [RegionRule] = []
    /// Per region, per beacon id: the engine rule's name.
    var engineNames: [String: [String: String]] = [:]
    /// Engine rule name -> the scenario's region name.
    var regionNames: [String: String] = [:]
    /// Per (region, beacon): the levels (enter, exit) the peer baselines use instead of the configured ones.
    var peerLevels: [TeachPhase.Key: (enter: Double, exit: Double)] = [:]

    /// `links`: what each pair was taught; a pair without levels (nothing heard) keeps the configured rule. With
    /// `peersTaught` the peer baselines get the taught levels too (what a peer would do with our teach). The levels
    /// sit `enterAllowance` dB below the taught boundary and `hysteresis` dB below that
    /// (`TaughtRegionLink.levels(enterAllowance:hysteresis:)`; by default the daemon's).
    public init(
        scenario: Scenario, links: [TeachPhase.Key: TaughtRegionLink], peersTaught: Bool = true,
        enterAllowance: Double = TaughtRegionLink.taughtEnterAllowance,
        hysteresis: Double = TaughtRegionLink.boundaryOnlyHysteresis
    ) {
        for rule in scenario.regions {
            guard rule.enter != nil else {
                rules.append(rule)
                continue
            }
            for beacon in scenario.beacons
            where rule.match.matches(
                format: beacon.format, identifiers: beacon.identifiers, address: beacon.address, name: beacon.name)
            {
                let key = TeachPhase.Key(region: rule.name, beaconID: beacon.beaconID)
                var own = rule
                own.name = "\(rule.name)\u{1F}\(beacon.beaconID)"
                own.match = RegionMatch(format: beacon.format, identifiers: beacon.identifiers, address: beacon.address)
                if let levels = links[key]?.levels(enterAllowance: enterAllowance, hysteresis: hysteresis) {
                    own.enter = .rssi(levels.enter)
                    own.exit = .rssi(levels.exit)
                    if peersTaught { peerLevels[key] = levels }
                }
                rules.append(own)
                engineNames[rule.name, default: [:]][beacon.beaconID] = own.name
                regionNames[own.name] = rule.name
            }
        }
    }

    /// The engine rule's name for a scenario region and beacon.
    func engineName(region: String, beaconID: String) -> String {
        engineNames[region]?[beaconID] ?? region
    }

    /// An engine event with the scenario's region name.
    func scenarioEvent(_ event: EngineEvent) -> EngineEvent {
        guard case var .region(region) = event, let name = regionNames[region.region] else { return event }
        region.region = name
        return .region(region)
    }
}
