import BeaconRooms

/// What a perfect averager of each gateway-beacon link could know: the analysis rows of the rooms table
/// (docs/rooms.md, "The oracle floor"). Not a deployable rule: it reads the simulator's hidden state.
///
/// A link's **true level** at an advertisement is everything in a report's RSSI except the fast fading, drawn by
/// `RoomSimulator.link` in the same pass as the reports (the same world, to the last bit): path loss, the walls on
/// the line of sight, the person's own loss (a pocket), the current body blocking, the current slow shadowing,
/// the link's fixed per-channel offsets averaged over the channels, and the gateway's receiver offset; less the
/// offset the arbiter is configured with for that gateway (calibration, so a calibration error stays in). At a
/// whole scenario second the level is the one of the person's last advertisement at or before it (the first one
/// before the first advertisement). Every kind shows the room of the gateway with the highest level of its kind
/// (a room's level is its best gateway's), at once, with no hysteresis:
///
/// - `mean(window: 0)` (`oracle-mean`): the true level now;
/// - `mean(window: W)` (`oracle-mean-Ws`): the true level averaged over the last W seconds (a perfect averager
///   of that length: no fading, no loss, no report noise, but the lag of its window);
/// - `fixed` (`oracle-fixed`): the link's long-run level at the person's position: path loss, walls and the
///   link's fixed bias (per-channel offsets averaged, calibration error), with the shadowing and body blocking
///   averaged away; what an infinitely long average at a spot converges to;
/// - `geometry` (`oracle-geometry`): path loss and walls only, receiver offsets calibrated away: the "ambiguous"
///   class of `RoomScore`;
/// - `felt` (not a row of its own; `RoomFingerprintOracle`'s `oracle-fp-felt`): `fixed`'s level plus the terms
///   the person's beacon carries for a while and a perfect averager could not take out: the link's posture term
///   for the current segment of the path (`SpatialField.postures`, one draw per stay or walk) and the body
///   blocking now (the link's episodes, `BlockingEpisodes`), both evaluated at the whole second itself. Still
///   without the slow shadowing, the channel draw, the fast fading and report loss, and without the person's own
///   loss (`attenuation`, a device offset constant over the whole run, left out as `fixed` leaves it out).
/// Every kind shows `not_home` (nil) exactly when the person is outside every room: the truth there.
public struct RoomOracle: Sendable {
    /// One link as the simulator drew it: the level at every advertisement time, and its fixed bias.
    public struct Link: Sendable {
        public var times: [Double]
        public var levels: [Double]
        public var fixed: Double
        /// The link's posture term per segment of the person's path (`ScenarioBeacon.segment(at:)`), and its body
        /// blocking episodes as drawn (`felt`); none: no posture, no blocking.
        var postures: [Double] = []
        var blocking: BlockingEpisodes?
        public init(times: [Double], levels: [Double], fixed: Double) {
            self.times = times
            self.levels = levels
            self.fixed = fixed
        }
    }

    public enum Kind: Sendable, Hashable {
        case mean(window: Int)
        case fixed
        case geometry
        case felt

        public var name: String {
            switch self {
            case let .mean(window): window > 0 ? "oracle-mean-\(window)s" : "oracle-mean"
            case .fixed: "oracle-fixed"
            case .geometry: "oracle-geometry"
            case .felt: "oracle-felt"
            }
        }
    }

    /// The kinds of the rooms table, in its order.
    public static let tableKinds: [Kind] = [
        .mean(window: 0), .mean(window: 10), .mean(window: 30), .mean(window: 60), .fixed, .geometry,
    ]

    public let scenario: RoomScenario
    /// Per person, per gateway, per whole second 0...duration: the calibrated true level.
    let perSecond: [[[Double]]]
    /// Per person, per gateway: the calibrated fixed bias of the link.
    let fixedBias: [[Double]]
    let field: SpatialField
    /// Per person, per whole second: path loss and walls of every gateway's link (empty outside every room).
    let geometry: [[[Double]]]
    /// Per person, per gateway, per whole second 0...duration: the link's posture term less its blocking depth
    /// at that second (`felt` adds it to `fixed`).
    let stay: [[[Double]]]
    private var rooms: [Kind: [[String?]]] = [:]

    init(scenario: RoomScenario, links: [[Link]]) {
        self.scenario = scenario
        field = SpatialField(scenario)
        let seconds = max(Int(scenario.duration.rounded(.down)), 0)
        let gateways = scenario.plan.gateways
        var perSecond: [[[Double]]] = []
        var fixedBias: [[Double]] = []
        var geometry: [[[Double]]] = []
        var stay: [[[Double]]] = []
        for (index, person) in scenario.people.enumerated() {
            var levels: [[Double]] = []
            var biases: [Double] = []
            var stays: [[Double]] = []
            for gateway in gateways.indices {
                let link = links[index][gateway]
                var blocking = link.blocking
                stays.append(
                    (0...seconds).map { second in
                        let t = Double(second)
                        let segment = person.segment(at: t)
                        let posture = link.postures.isEmpty ? 0 : link.postures[min(segment, link.postures.count - 1)]
                        return posture - (blocking?.depth(at: t) ?? 0)
                    })
                let calibration = scenario.arbiter.receiverOffsets[gateways[gateway].id] ?? 0
                biases.append(link.fixed - calibration)
                var row: [Double] = []
                row.reserveCapacity(seconds + 1)
                var cursor = 0
                for second in 0...seconds {
                    let t = Double(second)
                    while cursor + 1 < link.times.count, link.times[cursor + 1] <= t { cursor += 1 }
                    row.append(link.levels.isEmpty ? -.infinity : link.levels[cursor] - calibration)
                }
                levels.append(row)
            }
            var spots: [[Double]] = []
            spots.reserveCapacity(seconds + 1)
            for second in 0...seconds {
                let position = person.position(at: Double(second))
                spots.append(
                    scenario.plan.room(x: position.x, y: position.y) == nil
                        ? [] : Self.geometryLevels(scenario, person, x: position.x, y: position.y))
            }
            perSecond.append(levels)
            fixedBias.append(biases)
            geometry.append(spots)
            stay.append(stays)
        }
        self.perSecond = perSecond
        self.fixedBias = fixedBias
        self.geometry = geometry
        self.stay = stay
        for kind in Self.tableKinds { rooms[kind] = computeRooms(kind) }
    }

    /// The room `kind` shows for person `person` at a whole scenario second (clamped to the scenario).
    public func room(_ kind: Kind, person: Int, second: Int) -> String? {
        if let table = rooms[kind] { return table[person][min(max(second, 0), table[person].count - 1)] }
        let clamped = min(max(second, 0), geometry[person].count - 1)
        return level(kind, person: person, second: clamped).flatMap { Self.loudest($0, scenario.plan) }
    }

    /// The levels (one per gateway, calibrated) `kind` compares for person `person` at a whole second; nil
    /// outside every room.
    public func level(_ kind: Kind, person: Int, second: Int) -> [Double]? {
        let spot = geometry[person][second]
        guard !spot.isEmpty else { return nil }
        switch kind {
        case .geometry:
            return spot
        case .fixed, .felt:
            // The long-run level includes the position's spatial bias (`SpatialField`), fixed for a spot; `felt`
            // adds the posture of the stay and the blocking now.
            let position = scenario.people[person].position(at: Double(second))
            return zip(spot, fixedBias[person]).enumerated().map { gateway, pair in
                let level = pair.0 + pair.1 + field.bias(gateway: gateway, x: position.x, y: position.y)
                return kind == .felt ? level + stay[person][gateway][second] : level
            }
        case let .mean(window):
            let low = max(0, second - max(window, 1) + 1)
            return perSecond[person].map { row in
                var sum = 0.0
                for index in low...second { sum += row[index] }
                return sum / Double(second - low + 1)
            }
        }
    }

    private func computeRooms(_ kind: Kind) -> [[String?]] {
        scenario.people.indices.map { person in
            let count = geometry[person].count
            guard case let .mean(window) = kind, window > 1 else {
                return (0..<count).map {
                    level(kind, person: person, second: $0).flatMap { Self.loudest($0, scenario.plan) }
                }
            }
            // Running sums for the window means.
            let sums = perSecond[person].map { row in row.reduce(into: [0.0]) { $0.append($0[$0.count - 1] + $1) } }
            return (0..<count).map { second in
                guard !geometry[person][second].isEmpty else { return nil }
                let low = max(0, second - window + 1)
                let means = sums.map { ($0[second + 1] - $0[low]) / Double(second - low + 1) }
                return Self.loudest(means, scenario.plan)
            }
        }
    }

    /// The noise-free sightings behind the `+arbiter` rows: at every whole second, for every person and gateway, a
    /// sighting whose RSSI is the link's true level (`fixed`: its long-run level) before calibration (the arbiter
    /// takes its offsets out again), in time order. Outside every room the true level is used for both. None of a
    /// gateway while it is down (`RoomScenario.Outage`).
    public func sightings(fixed: Bool) -> [RoomSighting] {
        let seconds = max(Int(scenario.duration.rounded(.down)), 0)
        guard seconds >= 1 else { return [] }
        var result: [RoomSighting] = []
        result.reserveCapacity(seconds * scenario.people.count * scenario.plan.gateways.count)
        for second in 1...seconds {
            for (index, person) in scenario.people.enumerated() {
                let levels =
                    (fixed ? level(.fixed, person: index, second: second) : nil)
                    ?? perSecond[index].map { $0[second] }
                let time = scenario.startTime + Double(second)
                for (gateway, plan) in scenario.plan.gateways.enumerated()
                where levels[gateway].isFinite && !scenario.isDown(plan.id, at: time) {
                    let level = levels[gateway] + (scenario.arbiter.receiverOffsets[plan.id] ?? 0)
                    result.append(
                        RoomSighting(
                            gatewayID: plan.id, beaconID: person.beaconID, time: time,
                            rssi: level, rawRSSI: level, reportRate: person.rate))
                }
            }
        }
        return result
    }

    /// Path loss and walls of every gateway's link at a position (no random term; offsets calibrated away).
    static func geometryLevels(_ scenario: RoomScenario, _ person: ScenarioBeacon, x: Double, y: Double) -> [Double] {
        let model = scenario.distanceModel
        return scenario.plan.gateways.map { gateway in
            let dx = x - gateway.x
            let dy = y - gateway.y
            let distance = max((dx * dx + dy * dy).squareRoot(), 0.1)
            return model.meanRSSI(atDistance: distance, measuredPower: person.measuredPower)
                - scenario.plan.wallLoss(fromX: gateway.x, y: gateway.y, toX: x, y: y)
        }
    }

    /// The room of the loudest gateway (the first listed of equals); nil without gateways.
    static func loudest(_ levels: [Double], _ plan: FloorPlan) -> String? {
        var best: (level: Double, room: String)?
        for (gateway, level) in zip(plan.gateways, levels) where level > best?.level ?? -.infinity {
            best = (level, gateway.room)
        }
        return best?.room
    }
}
