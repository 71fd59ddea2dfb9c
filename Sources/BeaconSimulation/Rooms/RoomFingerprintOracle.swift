import BeaconModel

/// What a fingerprint classifier could reach with perfect evidence (issue 29): the analysis rows
/// `oracle-fp-*` of the rooms table (docs/rooms.md, "The fingerprint floor"). Not a deployable rule.
///
/// At every whole second it takes `oracle-fixed`'s levels of the person's links (`RoomOracle.level(.fixed…)`:
/// path loss, walls, the link's fixed bias and the spatial field at the spot, calibrated with the configured
/// offsets; no temporal radio, no posture: what an infinitely long average at that spot converges to) and shows
/// the room whose fingerprint is nearest, over the gateways both have, in one of two ways (`Match`). The
/// fingerprints come from one of two sources:
/// - `trained` (`oracle-fp`, `oracle-fp-diff`): the training phase's book (a 60 s walk at 3 spots per room,
///   `RoomTrainingRun`), its means moved from self-calibration's offsets to the configured ones;
/// - `room` (`oracle-fp-room`, `oracle-fp-room-diff`): an ideal walk: per room and gateway, the mean of the
///   long-run level (path loss, walls, spatial field; the scored person's measured power) over a 0.25 m grid
///   of the whole room. What more training than a minute at three spots could give at most.
/// Outside every room it shows `not_home`, the truth there.
///
/// `oracle-fp-felt` (docs/rooms.md, "The evidence floor") is `oracle-fp` (the training's book, `absolute`) matched
/// against `RoomOracle.Kind.felt`'s levels instead: the same long-run levels plus what the beacon carries for a
/// while and no averaging of its reports takes out: the posture term of each link for the stay, and the body
/// blocking at that second. It is told the spot (its spatial bias), the configured calibration, the posture and
/// the blocking exactly, at every second, from every gateway (outages ignored, as by `oracle-fp`); it is not given
/// the slow shadowing, the channel draw, the fast fading, report loss or the device's own loss (`attenuation`,
/// constant over the run, which a rule can learn as an offset). So it is the nearest fingerprint that a rule could
/// reach if it averaged each link perfectly without lag: the floor of a fingerprint rule on this evidence, where
/// `oracle-fp` is the floor without the per-stay terms.
public struct RoomFingerprintOracle: Sendable {
    public enum Source: String, Sendable { case trained, room }

    public enum Match: Sendable, CaseIterable {
        /// The least mean squared difference of the levels.
        case absolute
        /// The same after a common offset is taken out (the mean difference): a device louder or quieter than
        /// the trainer everywhere (another phone, a pocket, a posture shared by all links) matches alike.
        case differences
    }

    public let oracle: RoomOracle
    public let source: Source
    /// The levels matched: `fixed` (`oracle-fp*`) or `felt` (`oracle-fp-felt`).
    public let evidence: RoomOracle.Kind
    /// Per room (the plan's order) and gateway index: the fingerprint's mean, in the oracle's calibration;
    /// nil where the fingerprint lacks the gateway. Per person for `room` (measured power differs), one shared
    /// row set for `trained`.
    let means: [[(room: String, levels: [Double?])]]

    /// The 0.25 m grid of an ideal walk.
    static let gridStep = 0.25

    public init(oracle: RoomOracle, training: RoomTrainingRun, evidence: RoomOracle.Kind = .fixed) {
        precondition(evidence == .fixed || evidence == .felt, "a fingerprint oracle matches fixed or felt levels")
        self.oracle = oracle
        self.evidence = evidence
        source = .trained
        let scenario = oracle.scenario
        let rows = scenario.plan.rooms.compactMap { room -> (room: String, levels: [Double?])? in
            guard let fingerprint = training.book[room.name] else { return nil }
            return (
                room.name,
                scenario.plan.gateways.map { gateway in
                    fingerprint.levels[gateway.id].map {
                        $0.mean + (training.offsets[gateway.id] ?? 0)
                            - (scenario.arbiter.receiverOffsets[gateway.id] ?? 0)
                    }
                }
            )
        }
        means = Array(repeating: rows, count: scenario.people.count)
    }

    public init(oracle: RoomOracle) {
        self.oracle = oracle
        evidence = .fixed
        source = .room
        let scenario = oracle.scenario
        let field = oracle.field
        means = scenario.people.map { person in
            scenario.plan.rooms.map { room in
                var sums = Array(repeating: 0.0, count: scenario.plan.gateways.count)
                var count = 0
                var y = room.minY + Self.gridStep / 2
                while y < room.maxY {
                    var x = room.minX + Self.gridStep / 2
                    while x < room.maxX {
                        let levels = RoomOracle.geometryLevels(scenario, person, x: x, y: y)
                        for gateway in sums.indices {
                            sums[gateway] += levels[gateway] + field.bias(gateway: gateway, x: x, y: y)
                        }
                        count += 1
                        x += Self.gridStep
                    }
                    y += Self.gridStep
                }
                return (room.name, sums.map { count > 0 ? $0 / Double(count) : nil })
            }
        }
    }

    public func name(_ match: Match) -> String {
        let base = (source == .trained ? "oracle-fp" : "oracle-fp-room") + (evidence == .felt ? "-felt" : "")
        return match == .differences ? base + "-diff" : base
    }

    /// The room shown for person `person` at a whole scenario second.
    public func room(_ match: Match, person: Int, second: Int) -> String? {
        let clamped = min(max(second, 0), max(Int(oracle.scenario.duration.rounded(.down)), 0))
        guard let levels = oracle.level(evidence, person: person, second: clamped) else { return nil }
        return Self.nearest(levels, means[person], match)
    }

    /// The room of the nearest fingerprint (the first listed of equals); nil when none shares a gateway.
    static func nearest(_ levels: [Double], _ rows: [(room: String, levels: [Double?])], _ match: Match) -> String? {
        var best: (distance: Double, room: String)?
        for row in rows {
            var differences: [Double] = []
            for (level, mean) in zip(levels, row.levels) {
                if let mean, level.isFinite { differences.append(level - mean) }
            }
            // (A common offset out of a single gateway's difference leaves nothing to compare.)
            guard differences.count >= (match == .differences ? 2 : 1) else { continue }
            let shift = match == .differences ? differences.reduce(0, +) / Double(differences.count) : 0
            let distance = differences.reduce(0) { $0 + ($1 - shift) * ($1 - shift) } / Double(differences.count)
            if distance < best?.distance ?? .infinity { best = (distance, row.room) }
        }
        return best?.room
    }
}
