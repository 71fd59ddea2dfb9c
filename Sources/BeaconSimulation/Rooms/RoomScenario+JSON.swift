import BeaconModel
import BeaconRooms
import BeaconTracking

extension RoomScenario {
    /// Whether a scenario file's text is a multi-gateway (rooms) scenario: `"kind": "rooms"` at the top.
    public static func isRoomScenario(json text: String) -> Bool {
        guard case let .object(members)? = try? JSONValue(parsing: text) else { return false }
        return members.contains { $0.0 == "kind" && $0.1 == .string("rooms") }
    }

    /// Parses and validates a rooms scenario (docs/rooms.md). Errors name the key path. A file that names no
    /// `radio.model` runs on the measured radio (issue 43, session 27; before it, rooms defaulted to the
    /// pessimistic one); `radioModel` runs it on that model instead (`simulate --radio`), the file's keys of the
    /// measured and pessimistic models still applying on top of that model's defaults. Rooms have no independent
    /// radio: the room simulator draws only the correlated ones, so `independent` is refused either way.
    public init(json text: String, radioModel: ScenarioRadio.Model? = nil) throws(ScenarioError) {
        let root: JSONValue
        do { root = try JSONValue(parsing: text) } catch {
            throw ScenarioError(path: "", message: "not valid JSON: \(error)")
        }
        var fields = try ScenarioFields(root, path: "")
        guard try fields.string("kind") == "rooms" else {
            throw ScenarioError(path: "kind", message: "must be \"rooms\" for a multi-gateway scenario")
        }
        let name = try fields.string("name") ?? "rooms"
        let seed = try fields.int("seed") ?? 1
        guard seed >= 0 else { throw ScenarioError(path: "seed", message: "must be >= 0") }
        guard let duration = try fields.double("duration_s"), duration > 0, duration <= 7 * 86_400 else {
            throw ScenarioError(path: "duration_s", message: "required, > 0 and <= 604800 seconds")
        }
        let radio =
            try fields.object("radio").map { fields throws(ScenarioError) in
                try ScenarioRadio(fields, forcing: radioModel)
            } ?? ScenarioRadio(model: radioModel ?? .measured)
        guard radio.model != .independent else {
            throw ScenarioError(
                kind: .invalid, path: radioModel == nil ? "radio.model" : "",
                message: "rooms scenarios run on the measured or pessimistic radio, not 'independent' "
                    + "(the room simulator draws only the correlated radios)")
        }
        var tracker = RoomScenario.defaultTracker
        if let block = try fields.object("tracker") {
            var hasPublish = block
            let publishGiven = hasPublish.has("publish")
            tracker = try block.read { TrackerSettings(from: &$0) }
            if !publishGiven { tracker.publish = RoomScenario.defaultTracker.publish }
        }
        let plan = try FloorPlan(&fields)
        guard let personValues = try fields.array("people"), !personValues.isEmpty else {
            throw ScenarioError(path: "people", message: "required: a non-empty list of people (beacons)")
        }
        var people: [ScenarioBeacon] = []
        for (index, value) in personValues.enumerated() {
            people.append(try ScenarioBeacon(try ScenarioFields(value, path: "people[\(index)]"), index: index))
        }
        let links = people.reduce(0.0) { $0 + $1.rate * duration } * Double(plan.gateways.count)
        guard links <= Scenario.maxAdvertisements else {
            throw ScenarioError(
                path: "people",
                message: "too large: \(Int(links)) gateway-advertisement pairs, at most "
                    + "\(Int(Scenario.maxAdvertisements))")
        }
        var arbiter = RoomArbiterSettings(awayTimeout: tracker.awayTimeout)
        // Calibrated by default: the arbiter knows each gateway's receiver offset (docs/rooms.md, calibration).
        arbiter.receiverOffsets = Dictionary(
            plan.gateways.map { ($0.id, $0.receiverOffset) }, uniquingKeysWith: { a, _ in a })
        if let block = try fields.object("arbiter") {
            arbiter = try block.read { [arbiter] r in
                var settings = arbiter
                settings.read(from: &r)
                return settings
            }
            let gatewayIDs = Set(plan.gateways.map { $0.id })
            if let unknown = arbiter.receiverOffsets.keys.sorted().first(where: { !gatewayIDs.contains($0) }) {
                throw ScenarioError(
                    kind: .invalid, path: "arbiter.receiver_offsets_db.\(unknown)",
                    message: "no gateway `\(unknown)` in the floor plan")
            }
        }
        var gatewayLinks = GatewayLinkRadio()
        if let block = try fields.object("gateway_links") { gatewayLinks = try GatewayLinkRadio(block) }
        var training = RoomTrainingSettings()
        if let block = try fields.object("training") { training = try RoomTrainingSettings(block) }
        var spatialBias = SpatialBiasRadio()
        if let block = try fields.object("spatial_bias") { spatialBias = try SpatialBiasRadio(block) }
        let outages = try RoomScenario.outages(try fields.array("outages") ?? [], plan: plan, duration: duration)
        let warmup = try fields.double("warmup_s", default: 10)
        let stay = try fields.double("minimum_stay_s", default: 30)
        let grace = try fields.double("match_grace_s", default: 15)
        let startTime = try fields.double("start_time", default: 1_700_000_000)
        try fields.finish()
        for (key, value) in [("warmup_s", warmup), ("minimum_stay_s", stay), ("match_grace_s", grace)]
        where !(value >= 0 && value <= 3_600) {
            throw ScenarioError(kind: .invalid, path: key, message: "must be 0...3600 seconds")
        }
        let issues = tracker.validate(path: "tracker") + arbiter.validate(path: "arbiter")
        if let first = issues.first { throw ScenarioError(kind: .invalid, path: first.path, message: first.message) }
        self.init(
            name: name, seed: UInt64(seed), startTime: startTime, duration: duration, radio: radio,
            tracker: tracker, plan: plan, people: people, arbiter: arbiter, warmup: warmup, minimumStay: stay,
            matchGrace: grace)
        self.gatewayLinks = gatewayLinks
        self.training = training
        self.spatialBias = spatialBias
        self.outages = outages
    }
}

extension GatewayLinkRadio {
    /// The `gateway_links` block (docs/scenarios.md, "Gateway links"): `variant` sets the defaults, the other
    /// keys override them.
    init(_ block: ScenarioFields) throws(ScenarioError) {
        var fields = block
        let name = try fields.string("variant") ?? Variant.assumed.rawValue
        guard let variant = Variant(rawValue: name) else {
            throw ScenarioError(path: fields.keyPath("variant"), message: "must be 'assumed' or 'pessimistic'")
        }
        self.init(variant)
        identityRate = try fields.double("identity_rate_hz", default: identityRate)
        identityLoss = try fields.double("identity_loss", default: identityLoss)
        receiveOffsetSigma = try fields.double("receive_offset_sigma_db", default: receiveOffsetSigma)
        transmitOffsetSigma = try fields.double("transmit_offset_sigma_db", default: transmitOffsetSigma)
        reciprocalGainSigma = try fields.double("reciprocal_gain_sigma_db", default: reciprocalGainSigma)
        placementSigma = try fields.double("placement_sigma_db", default: placementSigma)
        asymmetrySigma = try fields.double("asymmetry_sigma_db", default: asymmetrySigma)
        let path = fields.path
        try fields.finish()
        guard identityRate > 0, identityRate <= 10 else {
            throw ScenarioError(kind: .invalid, path: path + ".identity_rate_hz", message: "must be (0, 10] Hz")
        }
        guard identityLoss >= 0, identityLoss < 1 else {
            throw ScenarioError(kind: .invalid, path: path + ".identity_loss", message: "must be [0, 1)")
        }
        for (key, value) in [
            ("receive_offset_sigma_db", receiveOffsetSigma), ("transmit_offset_sigma_db", transmitOffsetSigma),
            ("reciprocal_gain_sigma_db", reciprocalGainSigma), ("placement_sigma_db", placementSigma),
            ("asymmetry_sigma_db", asymmetrySigma),
        ] where !(value >= 0 && value <= 20) {
            throw ScenarioError(kind: .invalid, path: path + "." + key, message: "must be 0...20 dB")
        }
    }
}

extension FloorPlan {
    init(_ fields: inout ScenarioFields) throws(ScenarioError) {
        func pair(_ value: JSONValue?, path: String) throws(ScenarioError) -> (Double, Double) {
            guard case let .array(items)? = value, items.count == 2 else {
                throw ScenarioError(path: path, message: "expected [a, b] (metres)")
            }
            var numbers: [Double] = []
            for item in items {
                switch item {
                case let .int(number): numbers.append(Double(number))
                case let .double(number) where number.isFinite: numbers.append(number)
                default: throw ScenarioError(path: path, message: "expected two numbers (metres)")
                }
            }
            return (numbers[0], numbers[1])
        }
        var rooms: [Room] = []
        for (index, value) in (try fields.array("rooms") ?? []).enumerated() {
            var room = try ScenarioFields(value, path: "rooms[\(index)]")
            guard let name = try room.string("name"), !name.isEmpty else {
                throw ScenarioError(path: room.keyPath("name"), message: "required, a non-empty room name")
            }
            guard !rooms.contains(where: { $0.name == name }) else {
                throw ScenarioError(
                    kind: .invalid, path: room.keyPath("name"), message: "room '\(name)' is listed twice")
            }
            let x = try pair(room.raw("x"), path: room.keyPath("x"))
            let y = try pair(room.raw("y"), path: room.keyPath("y"))
            try room.finish()
            guard x.0 != x.1, y.0 != y.1 else {
                throw ScenarioError(kind: .invalid, path: room.path, message: "a room needs a non-zero width and depth")
            }
            rooms.append(Room(name: name, minX: x.0, minY: y.0, maxX: x.1, maxY: y.1))
        }
        guard !rooms.isEmpty else { throw ScenarioError(path: "rooms", message: "required: at least one room") }
        var walls: [Wall] = []
        for (index, value) in (try fields.array("walls") ?? []).enumerated() {
            var wall = try ScenarioFields(value, path: "walls[\(index)]")
            let from = try pair(wall.raw("from"), path: wall.keyPath("from"))
            let to = try pair(wall.raw("to"), path: wall.keyPath("to"))
            let attenuation = try wall.double("attenuation_db", default: 3.4)
            try wall.finish()
            guard attenuation >= 0, attenuation <= 60 else {
                throw ScenarioError(kind: .invalid, path: wall.keyPath("attenuation_db"), message: "must be 0...60 dB")
            }
            walls.append(Wall(x1: from.0, y1: from.1, x2: to.0, y2: to.1, attenuation: attenuation))
        }
        var gateways: [Gateway] = []
        for (index, value) in (try fields.array("gateways") ?? []).enumerated() {
            var gateway = try ScenarioFields(value, path: "gateways[\(index)]")
            guard let id = try gateway.string("id"), !id.isEmpty else {
                throw ScenarioError(path: gateway.keyPath("id"), message: "required, a gateway id")
            }
            guard !gateways.contains(where: { $0.id == id }) else {
                throw ScenarioError(
                    kind: .invalid, path: gateway.keyPath("id"), message: "gateway '\(id)' is listed twice")
            }
            let x = try gateway.double("x", default: 0)
            let y = try gateway.double("y", default: 0)
            let offset = try gateway.double("receiver_offset_db", default: 0)
            let room = try gateway.string("room") ?? rooms.first { $0.contains(x: x, y: y) }?.name
            try gateway.finish()
            guard let room, rooms.contains(where: { $0.name == room }) else {
                throw ScenarioError(
                    kind: .invalid, path: gateway.keyPath("room"),
                    message: "must name one of the rooms (or the gateway must stand in one)")
            }
            guard abs(offset) <= 30 else {
                throw ScenarioError(
                    kind: .invalid, path: gateway.keyPath("receiver_offset_db"), message: "must be -30...30 dB")
            }
            gateways.append(Gateway(id: id, room: room, x: x, y: y, receiverOffset: offset))
        }
        guard !gateways.isEmpty else {
            throw ScenarioError(path: "gateways", message: "required: at least one gateway")
        }
        self.init(rooms: rooms, walls: walls, gateways: gateways)
    }
}
