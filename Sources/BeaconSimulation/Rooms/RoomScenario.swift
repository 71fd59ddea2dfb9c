import BeaconModel
import BeaconRooms
import BeaconTracking

/// A multi-gateway simulation (issue 12): a floor plan with rooms, walls and gateways, people carrying beacons
/// along waypoint paths (floor-plan metres), the gateways' tracker settings and the arbiter's parameters. The
/// file format (JSON, `"kind": "rooms"`) is documented in docs/rooms.md.
public struct RoomScenario: Sendable {
    public var name: String
    public var seed: UInt64
    public var startTime: Timestamp
    public var duration: Double
    public var radio: ScenarioRadio
    /// Every gateway's tracker (filter, sighting publish policy).
    public var tracker: TrackerSettings
    public var plan: FloorPlan
    public var people: [ScenarioBeacon]
    /// The arbiter's parameters; `gatewayRooms` and `roomsWithoutGateway` come from the plan.
    public var arbiter: RoomArbiterSettings
    /// Seconds at the start not scored (every rule is still undecided).
    public var warmup: Double
    /// True stays shorter than this (passing through) are not counted in the room-change latency.
    public var minimumStay: Double
    /// A room change made up to this long after a true stay ended still counts as following it.
    public var matchGrace: Double
    /// The gateways' own radio terms and links (self-calibration, docs/scenarios.md "Gateway links").
    public var gatewayLinks = GatewayLinkRadio()
    /// The training phase before the scored stream (`RoomTrainingRun`; the file's `training` block).
    public var training = RoomTrainingSettings()
    /// The position-dependent link bias and postures (`SpatialBiasRadio`; the file's `spatial_bias` block).
    public var spatialBias = SpatialBiasRadio()
    /// Gateways down for a while (`Outage`; the file's `outages`, docs/rooms.md "Gateway outages").
    public var outages: [Outage] = []
    /// Set by `realized()`: this seed's gateway terms, already in the plan's receiver offsets and the arbiter's.
    public internal(set) var gatewayTermsApplied = false
    public internal(set) var gatewayDraws: GatewayDraws?

    public init(
        name: String = "rooms", seed: UInt64 = 1, startTime: Timestamp = 1_700_000_000, duration: Double,
        radio: ScenarioRadio = ScenarioRadio(model: .measured),
        tracker: TrackerSettings = RoomScenario.defaultTracker,
        plan: FloorPlan, people: [ScenarioBeacon], arbiter: RoomArbiterSettings? = nil, warmup: Double = 10,
        minimumStay: Double = 30, matchGrace: Double = 15
    ) {
        self.name = name
        self.seed = seed
        self.startTime = startTime
        self.duration = duration
        self.radio = radio
        self.tracker = tracker
        self.plan = plan
        self.people = people
        var settings = arbiter ?? RoomArbiterSettings()
        settings.gatewayRooms = Dictionary(
            plan.gateways.map { ($0.id, $0.room) }, uniquingKeysWith: { first, _ in first })
        // A room of the plan that no gateway stands in (issue 43): only the trained classifier can name it.
        settings.roomsWithoutGateway = Set(plan.rooms.map(\.name)).subtracting(settings.gatewayRooms.values)
        self.arbiter = settings
        self.warmup = warmup
        self.minimumStay = minimumStay
        self.matchGrace = matchGrace
    }

    /// Gateways in a room deployment publish a sighting at least once a second (docs/rooms.md); the rest of
    /// the tracker is the gateway default.
    public static var defaultTracker: TrackerSettings {
        var settings = TrackerSettings.default
        settings.publish.sightingInterval = 1
        return settings
    }

    public var distanceModel: SimulationDistance {
        SimulationDistance(pathLossExponent: radio.pathLossExponent, defaultMeasuredPower: radio.defaultMeasuredPower)
    }
}
