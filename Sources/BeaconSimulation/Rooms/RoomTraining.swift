import BeaconModel
import BeaconRooms

/// The training phase of a rooms scenario (issue 29; docs/rooms.md, "Training (issue 29, session 19)"): before
/// the scored stream, a trainer carries a device like the scenario's first beacon (its format, measured power,
/// rate, loss and attenuation) through every room in turn, `secondsPerRoom` each, walking slowly between `spots`
/// random spots of the room that stand at least `clearance` metres from every place a scored person stops (where
/// the room allows), so that training is scored only on spots, postures and times other than those trained.
/// The file's `training` block sets these (`seconds_per_room`, `spots`, `clearance_m`).
public struct RoomTrainingSettings: Sendable, Equatable {
    /// Seconds of walk per room: the "at most 60 s per room".
    public var secondsPerRoom: Double = 60
    /// Spots visited per room (the walk stands at each for half its share of the time, then walks on).
    public var spots = 3
    /// Least distance (metres) from a spot to any scored person's stop, where the room has such a place.
    public var clearance = 1.0
    /// Where in the room the spots are drawn.
    public var layout = Layout.spread

    public enum Layout: String, Sendable, Equatable, CaseIterable {
        /// One spot per strip of the room (`spots` equal strips across its longer side): a walk that covers
        /// the room, as a user asked to walk the room does (the default since session 21).
        case spread
        /// Anywhere in the room, each spot on its own (session 19's model, kept as the pessimistic variant: the
        /// clearance from the scored stops often leaves one corner, and all three spots land there).
        case random
    }

    public init(secondsPerRoom: Double = 60, spots: Int = 3, clearance: Double = 1.0, layout: Layout = .spread) {
        self.secondsPerRoom = secondsPerRoom
        self.spots = spots
        self.clearance = clearance
        self.layout = layout
    }

    /// The `training` block: `{"seconds_per_room": 60, "spots": 3, "clearance_m": 1, "layout": "spread"}`.
    init(_ block: ScenarioFields) throws(ScenarioError) {
        var fields = block
        self.init()
        secondsPerRoom = try fields.double("seconds_per_room", default: secondsPerRoom)
        spots = try fields.int("spots") ?? spots
        clearance = try fields.double("clearance_m", default: clearance)
        let path = fields.path
        if let name = try fields.string("layout") {
            guard let value = Layout(rawValue: name) else {
                throw ScenarioError(
                    kind: .invalid, path: path + ".layout",
                    message: "must be one of \(Layout.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            layout = value
        }
        try fields.finish()
        guard secondsPerRoom >= 5, secondsPerRoom <= 60 else {
            throw ScenarioError(
                kind: .invalid, path: path + ".seconds_per_room",
                message: "must be 5...60 seconds (issue 29: a minute at most)")
        }
        guard (1...10).contains(spots) else {
            throw ScenarioError(kind: .invalid, path: path + ".spots", message: "must be 1...10")
        }
        guard clearance >= 0, clearance <= 10 else {
            throw ScenarioError(kind: .invalid, path: path + ".clearance_m", message: "must be 0...10 metres")
        }
    }
}

/// One room's training walk: where it goes, and when (scenario seconds, negative: before the scored stream).
public struct RoomTrainingWalk: Sendable {
    public var room: String
    /// The spots visited, and each one's distance to the nearest scored stop (metres; infinity with no stop).
    public var spots: [(x: Double, y: Double, nearestStop: Double)]
    /// The trainer, its path in scenario seconds relative to the walk's start.
    public var trainer: ScenarioBeacon
    /// Scenario seconds at which the walk starts (negative).
    public var start: Double
    public var duration: Double
}

/// The training phase of one run: every room's walk simulated through the same radio, gateways and trackers as
/// the scored stream (its own random streams: the scored people's draws are unchanged), each gateway's
/// sightings of the trainer turned into calibrated levels (raw RSSI less the `calibrated` row's receive offsets
/// at the end of its run) and recorded per room (`FingerprintRecorder` → `FingerprintBook`), plus the per-second
/// vectors a plain fingerprint rule keeps (`RoomTrainingVector`).
public struct RoomTrainingRun: Sendable {
    public var walks: [RoomTrainingWalk]
    public var book: FingerprintBook
    public var vectors: [RoomTrainingVector]
    /// The offsets the levels were calibrated with (gateway id → dB).
    public var offsets: [String: Double]
    public var reports: [Report]

    /// What the table prints per room.
    public struct Report: Sendable, Equatable {
        public var scenario: String
        public var room: String
        public var quality: Double
        public var gatewaysHeard: Int
        public var samples: Int
        /// Least distance of the walk's spots to a scored stop (metres; infinity with no stop).
        public var nearestStop: Double
    }

    /// Levels below this (dB) stand for "not heard" in a training vector (the sensitivity's 50 % point).
    public static let missingLevel = -100.0
    /// A gateway's latest level counts in a vector for this long after it was heard (seconds).
    public static let vectorFreshness = 5.0

    /// Trains `scenario` (realised) with `offsets` as the receive offsets the levels are calibrated with.
    public init(scenario: RoomScenario, offsets: [String: Double]) {
        self.offsets = offsets
        walks = Self.walks(scenario)
        var book = FingerprintBook()
        var vectors: [RoomTrainingVector] = []
        var reports: [Report] = []
        let gatewayIDs = scenario.plan.gateways.map(\.id)
        for (index, walk) in walks.enumerated() {
            var world = scenario
            world.startTime = scenario.startTime + walk.start
            world.duration = walk.duration
            world.people = [walk.trainer]
            // The training phase is before time 0: no outage reaches it.
            world.outages = []
            let simulator = RoomSimulator(world)
            // Streams far above the people's (index * 64 + gateway + 1) and the identity beacons' (20_000 + j).
            let stream = 40_000 + index
            let schedule = simulator.advertisements(of: walk.trainer, index: stream)
            let heard = scenario.plan.gateways.indices.map {
                simulator.link(walk.trainer, index: stream, gateway: $0, schedule: schedule).observations
            }
            let sightings = RoomScenarioRun.sightings(world, heard)
            var recorder = FingerprintRecorder(
                room: walk.room, deviceID: walk.trainer.beaconID, start: world.startTime, duration: walk.duration)
            var latest: [String: (level: Double, time: Timestamp)] = [:]
            var next = 0
            var tick = world.startTime + 1
            while tick <= world.startTime + walk.duration {
                while next < sightings.count, sightings[next].time <= tick {
                    let sighting = sightings[next]
                    let level = (sighting.rawRSSI ?? sighting.rssi) - (offsets[sighting.gatewayID] ?? 0)
                    recorder.add(gateway: sighting.gatewayID, level: level, at: sighting.time)
                    latest[sighting.gatewayID] = (level, sighting.time)
                    next += 1
                }
                let levels = gatewayIDs.map { id in
                    latest[id].flatMap { tick - $0.time <= Self.vectorFreshness ? $0.level : nil }
                        ?? Self.missingLevel
                }
                if levels.contains(where: { $0 > Self.missingLevel }) {
                    vectors.append(RoomTrainingVector(room: walk.room, time: tick, levels: levels))
                }
                tick += 1
            }
            let fingerprint = recorder.fingerprint()
            if let fingerprint { book.add(fingerprint) }
            reports.append(
                Report(
                    scenario: scenario.name, room: walk.room, quality: fingerprint?.quality ?? 0,
                    gatewaysHeard: fingerprint?.levels.count ?? 0,
                    samples: fingerprint?.levels.values.reduce(0) { $0 + $1.samples } ?? 0,
                    nearestStop: walk.spots.map(\.nearestStop).min() ?? .infinity))
        }
        self.book = book
        self.vectors = vectors
        self.reports = reports
    }

    /// Where every scored person stops: the first and last waypoints (standing before and after the path) and
    /// every waypoint the path stays at (the next one at the same place).
    static func stops(_ scenario: RoomScenario) -> [(x: Double, y: Double)] {
        var result: [(x: Double, y: Double)] = []
        for person in scenario.people {
            let path = person.path
            for (index, point) in path.enumerated() {
                let still =
                    index == 0 || index == path.count - 1
                    || (path[index + 1].x == point.x && path[index + 1].y == point.y)
                if still { result.append((point.x, point.y)) }
            }
        }
        return result
    }

    /// Every room's walk, in the plan's order, back to back and ending at the scored stream's start.
    static func walks(_ scenario: RoomScenario) -> [RoomTrainingWalk] {
        let settings = scenario.training
        let stops = Self.stops(scenario)
        let rooms = scenario.plan.rooms
        let length = settings.secondsPerRoom
        let device = scenario.people.first
        var walks: [RoomTrainingWalk] = []
        for (index, room) in rooms.enumerated() {
            var random = SimulationRandom(seed: scenario.seed, stream: 3_000_000 + index)
            let spots = (0..<settings.spots).map { strip in
                spot(
                    in: settings.layout == .spread ? Self.strip(strip, of: settings.spots, in: room) : room,
                    away: stops, clearance: settings.clearance, random: &random)
            }
            // Stand at each spot for half its share of the walk, then walk slowly to the next (back to the
            // first after the last).
            let share = length / Double(spots.count)
            var path: [Waypoint] = []
            for (k, spot) in spots.enumerated() {
                path.append(Waypoint(time: Double(k) * share, x: spot.x, y: spot.y))
                path.append(Waypoint(time: Double(k) * share + share / 2, x: spot.x, y: spot.y))
            }
            if spots.count > 1, let first = spots.first {
                path.append(Waypoint(time: length, x: first.x, y: first.y))
            }
            var trainer = ScenarioBeacon(
                beaconID: "trainer:\(room.name)", format: device?.format ?? "ibeacon",
                identifiers: device?.identifiers ?? [],
                address: device?.address ?? BluetoothAddress(rawValue: 0x0C_0000_0001),
                measuredPower: device?.measuredPower ?? -59, rate: device?.rate ?? 1, loss: device?.loss ?? 0.3,
                attenuation: device?.attenuation ?? 0, path: path)
            trainer.name = "trainer"
            walks.append(
                RoomTrainingWalk(
                    room: room.name, spots: spots, trainer: trainer,
                    start: -Double(rooms.count - index) * length, duration: length))
        }
        return walks
    }

    /// Strip `index` of `count` equal strips across the room's longer side.
    static func strip(_ index: Int, of count: Int, in room: FloorPlan.Room) -> FloorPlan.Room {
        let width = room.maxX - room.minX
        let depth = room.maxY - room.minY
        let low = Double(index) / Double(count)
        let high = Double(index + 1) / Double(count)
        if width >= depth {
            return FloorPlan.Room(
                name: room.name, minX: room.minX + low * width, minY: room.minY, maxX: room.minX + high * width,
                maxY: room.maxY)
        }
        return FloorPlan.Room(
            name: room.name, minX: room.minX, minY: room.minY + low * depth, maxX: room.maxX,
            maxY: room.minY + high * depth)
    }

    /// A random spot in the room (0.3 m from its sides, less in a narrow room) at least `clearance` from every
    /// stop: the first of up to 64 draws that is, else the draw farthest from the stops.
    static func spot(
        in room: FloorPlan.Room, away stops: [(x: Double, y: Double)], clearance: Double,
        random: inout SimulationRandom
    ) -> (x: Double, y: Double, nearestStop: Double) {
        let insetX = min(0.3, (room.maxX - room.minX) / 4)
        let insetY = min(0.3, (room.maxY - room.minY) / 4)
        var best: (x: Double, y: Double, nearestStop: Double)?
        for _ in 0..<64 {
            let x = random.uniform(room.minX + insetX, room.maxX - insetX)
            let y = random.uniform(room.minY + insetY, room.maxY - insetY)
            let nearest =
                stops.map { (($0.x - x) * ($0.x - x) + ($0.y - y) * ($0.y - y)).squareRoot() }.min() ?? .infinity
            if nearest >= clearance { return (x, y, nearest) }
            if nearest > (best?.nearestStop ?? -1) { best = (x, y, nearest) }
        }
        return best ?? ((room.minX + room.maxX) / 2, (room.minY + room.maxY) / 2, 0)
    }
}

/// One second of training: every gateway's latest calibrated level (plan order; `RoomTrainingRun.missingLevel`
/// when not heard in the last `vectorFreshness` seconds) and the room trained.
public struct RoomTrainingVector: Sendable, Equatable {
    public var room: String
    public var time: Timestamp
    public var levels: [Double]
}
