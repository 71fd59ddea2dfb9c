import BeaconModel
import BeaconTracking

extension Scenario {
    /// Upper bound on simulated advertisements per run, so a scenario file cannot exhaust memory.
    public static let maxAdvertisements = 50_000_000.0

    /// Parses and validates a scenario file (format in docs/scenarios.md). Errors name the key path.
    /// `radioModel` runs the file on that radio model instead of its own (`simulate --radio`): the file's keys
    /// of the realistic models still apply on top of that model's defaults, keys of the other family are ignored.
    public init(json text: String, radioModel: ScenarioRadio.Model? = nil) throws(ScenarioError) {
        let root: JSONValue
        do {
            root = try JSONValue(parsing: text)
        } catch {
            throw ScenarioError(path: "", message: "not valid JSON: \(error)")
        }
        var fields = try ScenarioFields(root, path: "")
        let name = try fields.string("name") ?? "scenario"
        let seed = try fields.int("seed") ?? 1
        guard seed >= 0 else { throw ScenarioError(path: "seed", message: "must be >= 0") }
        let duration = try fields.double("duration_s")
        guard let duration, duration > 0, duration <= 7 * 86_400 else {
            throw ScenarioError(path: "duration_s", message: "required, > 0 and <= 604800 seconds")
        }
        let advance = try fields.double("advance_interval_s", default: 0.25)
        guard advance > 0, advance <= 60 else {
            throw ScenarioError(path: "advance_interval_s", message: "must be > 0 and <= 60 seconds")
        }
        let radio =
            try fields.object("radio").map { fields throws(ScenarioError) in
                try ScenarioRadio(fields, forcing: radioModel)
            } ?? ScenarioRadio(model: radioModel ?? .measured)
        var settings =
            try fields.object("tracker").map { fields throws(ScenarioError) in
                try fields.read { TrackerSettings(from: &$0) }
            }
            ?? .default
        var regions: [RegionRule] = []
        for (index, value) in (try fields.array("regions") ?? []).enumerated() {
            let inherited = settings.sensitivity
            regions.append(
                try ScenarioFields(value, path: "regions[\(index)]").read {
                    RegionRule(from: &$0, inherited: inherited)
                })
        }
        guard let beaconValues = try fields.array("beacons"), !beaconValues.isEmpty else {
            throw ScenarioError(path: "beacons", message: "required: a non-empty list of beacons")
        }
        var beacons: [ScenarioBeacon] = []
        for (index, value) in beaconValues.enumerated() {
            beacons.append(try ScenarioBeacon(try ScenarioFields(value, path: "beacons[\(index)]"), index: index))
        }
        for beacon in beacons {
            if let timeout = beacon.awayTimeout { settings.awayTimeoutOverrides[beacon.beaconID] = timeout }
        }
        let advertisements = beacons.reduce(0.0) { $0 + $1.rate * duration }
        guard advertisements <= Scenario.maxAdvertisements else {
            throw ScenarioError(
                path: "beacons",
                message: "too large: \(Int(advertisements)) advertisements in total "
                    + "(rate_hz × duration_s summed over beacons), at most \(Int(Scenario.maxAdvertisements))")
        }
        var restarts: [Double] = []
        for (index, value) in (try fields.array("restarts_s") ?? []).enumerated() {
            switch value {
            case let .int(number) where number > 0 && Double(number) < duration: restarts.append(Double(number))
            case let .double(number) where number > 0 && number < duration: restarts.append(number)
            default: throw ScenarioError(path: "restarts_s[\(index)]", message: "must be a time inside the scenario")
            }
        }
        let downtime = try fields.double("restart_downtime_s", default: 0)
        guard downtime >= 0, downtime <= 86_400 else {
            throw ScenarioError(path: "restart_downtime_s", message: "must be 0...86400 seconds")
        }
        let startTime = try fields.double("start_time", default: 1_700_000_000)
        guard startTime >= 0, startTime < 1e11 else {
            throw ScenarioError(path: "start_time", message: "must be seconds since 1970")
        }
        try fields.finish()

        let issues = settings.validate(path: "tracker") + RegionRule.validate(regions)
        if let first = issues.first {
            let more =
                issues.count > 1
                ? " (and \(issues.count - 1) more: " + issues.dropFirst().map(\.description).joined(separator: "; ")
                    + ")" : ""
            throw ScenarioError(kind: .invalid, path: first.path, message: first.message + more)
        }
        self.init(
            name: name, seed: UInt64(seed), startTime: startTime, duration: duration,
            advanceInterval: advance, radio: radio, settings: settings, regions: regions, beacons: beacons,
            restarts: restarts.sorted(), restartDowntime: downtime)
    }
}

extension ScenarioRadio {
    /// A file that names no `model` runs on the measured radio (region and, since issue 43's session 27, rooms
    /// scenarios alike); `forced` (`simulate --radio`) replaces the file's model.
    init(_ fields: ScenarioFields, forcing forced: Model? = nil) throws(ScenarioError) {
        var fields = fields
        var chosen = Model.measured
        if let name = try fields.string("model") {
            // `realistic` is the pessimistic model's name from before the measured radio (issue 30).
            guard let parsed = name == "realistic" ? .pessimistic : Model(rawValue: name) else {
                throw ScenarioError(
                    path: fields.keyPath("model"),
                    message: "must be 'measured', 'pessimistic' (or its old name 'realistic') or 'independent', "
                        + "got '\(name)'")
            }
            chosen = parsed
        }
        self.init(model: forced ?? chosen)
        pathLossExponent = try fields.double("path_loss_exponent", default: pathLossExponent)
        sigma = try fields.double("sigma_db", default: sigma)
        noiseFloor = try fields.double("noise_floor_dbm", default: noiseFloor)
        defaultMeasuredPower = try fields.int("default_measured_power") ?? defaultMeasuredPower
        for (index, value) in (try fields.array("channel_offsets_db") ?? []).enumerated() {
            switch value {
            case let .int(number) where abs(number) <= 30: channelOffsets.append(Double(number))
            case let .double(number) where abs(number) <= 30: channelOffsets.append(number)
            default:
                throw ScenarioError(
                    path: fields.keyPath("channel_offsets_db[\(index)]"), message: "must be a number -30...30 dB")
            }
        }
        channelDwell = try fields.double("channel_dwell_s", default: channelDwell)
        let realisticKeys = RealisticRadio.keys.filter { fields.has($0) }
        realistic = try RealisticRadio(&fields, base: realistic)
        try fields.finish()
        if forced == nil, model == .independent, let key = realisticKeys.first {
            throw ScenarioError(
                path: fields.keyPath(key),
                message: "belongs to the measured and pessimistic models; this radio is 'independent'")
        }
        if forced == nil, model != .independent, fields.has("sigma_db") {
            throw ScenarioError(
                path: fields.keyPath("sigma_db"),
                message: "belongs to the independent model; the measured and pessimistic "
                    + "model's terms are shadowing_sigma_db and fading_sigma_db (or set \"model\": \"independent\")")
        }
        guard channelDwell > 0, channelDwell <= 3_600 else {
            throw ScenarioError(path: fields.keyPath("channel_dwell_s"), message: "must be > 0 and <= 3600 seconds")
        }
        guard pathLossExponent >= 1, pathLossExponent <= 6 else {
            throw ScenarioError(path: fields.keyPath("path_loss_exponent"), message: "must be 1...6")
        }
        guard sigma >= 0, sigma <= 20 else {
            throw ScenarioError(path: fields.keyPath("sigma_db"), message: "must be 0...20 dB")
        }
        guard noiseFloor >= -127, noiseFloor <= 0 else {
            throw ScenarioError(path: fields.keyPath("noise_floor_dbm"), message: "must be -127...0 dBm")
        }
        guard (-127...20).contains(defaultMeasuredPower) else {
            throw ScenarioError(path: fields.keyPath("default_measured_power"), message: "must be -127...20 dBm")
        }
    }
}

extension RealisticRadio {
    /// The `radio` keys only the realistic model reads.
    static let keys = [
        "shadowing_sigma_db", "shadowing_time_s", "shadowing_distance_m", "fading_sigma_db",
        "channel_offset_sigma_db", "loss_burst_s", "loss_burst_share", "sensitivity_width_db",
        "adv_delay_max_s", "body_blocking", "channel_mixing", "placement_sigma_db", "posture_sigma_db",
    ]

    /// Reads the realistic model's keys from the `radio` object (docs/scenarios.md) and checks their ranges.
    init(_ fields: inout ScenarioFields, base: RealisticRadio) throws(ScenarioError) {
        self = base
        func read(
            _ key: String, _ value: inout Double, _ range: ClosedRange<Double>, _ unit: String,
            in fields: inout ScenarioFields
        ) throws(ScenarioError) {
            value = try fields.double(key, default: value)
            guard range.contains(value) else {
                throw ScenarioError(
                    path: fields.keyPath(key),
                    message: "must be \(range.lowerBound)...\(range.upperBound) \(unit), got \(value)")
            }
        }
        try read("shadowing_sigma_db", &shadowingSigma, 0...20, "dB", in: &fields)
        try read("shadowing_time_s", &shadowingTime, 0.01...3_600, "seconds", in: &fields)
        try read("shadowing_distance_m", &shadowingDistance, 0.01...1_000, "metres", in: &fields)
        try read("fading_sigma_db", &fadingSigma, 0...20, "dB", in: &fields)
        try read("channel_offset_sigma_db", &channelOffsetSigma, 0...20, "dB", in: &fields)
        try read("loss_burst_s", &lossBurst, 0...3_600, "seconds", in: &fields)
        try read("loss_burst_share", &lossBurstShare, 0...0.99, "(fraction of time)", in: &fields)
        try read("sensitivity_width_db", &sensitivityWidth, 0.01...20, "dB", in: &fields)
        try read("adv_delay_max_s", &advDelayMax, 0...1, "seconds", in: &fields)
        try read("placement_sigma_db", &placementSigma, 0...20, "dB", in: &fields)
        try read("posture_sigma_db", &postureSigma, 0...20, "dB", in: &fields)
        channelMixing = try fields.bool("channel_mixing") ?? channelMixing
        if var block = try fields.object("body_blocking") {
            try read("mean_interval_s", &blocking.meanInterval, 0...1_000_000, "seconds (0: off)", in: &block)
            try read("min_s", &blocking.minLength, 0.01...86_400, "seconds", in: &block)
            try read("max_s", &blocking.maxLength, 0.01...86_400, "seconds", in: &block)
            try read("min_db", &blocking.minDepth, 0...60, "dB", in: &block)
            try read("max_db", &blocking.maxDepth, 0...60, "dB", in: &block)
            try block.finish()
            guard blocking.minLength <= blocking.maxLength, blocking.minDepth <= blocking.maxDepth else {
                throw ScenarioError(path: block.path, message: "needs min_s <= max_s and min_db <= max_db")
            }
        }
    }
}
