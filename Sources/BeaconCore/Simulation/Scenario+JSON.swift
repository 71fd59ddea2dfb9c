extension Scenario {
    /// Upper bound on simulated advertisements per run, so a scenario file cannot exhaust memory.
    public static let maxAdvertisements = 50_000_000.0

    /// Parses and validates a scenario file (format in docs/scenarios.md). Errors name the key path.
    public init(json text: String) throws(ScenarioError) {
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
        let radio = try fields.object("radio").map { fields throws(ScenarioError) in try ScenarioRadio(fields) } ?? ScenarioRadio()
        let settings = try fields.object("tracker").map { fields throws(ScenarioError) in try TrackerSettings(scenario: fields) } ?? .default
        var regions: [RegionRule] = []
        for (index, value) in (try fields.array("regions") ?? []).enumerated() {
            regions.append(try RegionRule(scenario: try ScenarioFields(value, path: "regions[\(index)]")))
        }
        guard let beaconValues = try fields.array("beacons"), !beaconValues.isEmpty else {
            throw ScenarioError(path: "beacons", message: "required: a non-empty list of beacons")
        }
        var beacons: [ScenarioBeacon] = []
        for (index, value) in beaconValues.enumerated() {
            beacons.append(try ScenarioBeacon(try ScenarioFields(value, path: "beacons[\(index)]"), index: index))
        }
        let advertisements = beacons.reduce(0.0) { $0 + $1.rate * duration }
        guard advertisements <= Scenario.maxAdvertisements else {
            throw ScenarioError(path: "beacons", message: "too large: \(Int(advertisements)) advertisements in total "
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
            let more = issues.count > 1 ? " (and \(issues.count - 1) more: " + issues.dropFirst().map(\.description).joined(separator: "; ") + ")" : ""
            throw ScenarioError(kind: .invalid, path: first.path, message: first.message + more)
        }
        self.init(name: name, seed: UInt64(seed), startTime: startTime, duration: duration,
                  advanceInterval: advance, radio: radio, settings: settings, regions: regions, beacons: beacons,
                  restarts: restarts.sorted(), restartDowntime: downtime)
    }
}

extension ScenarioRadio {
    init(_ fields: ScenarioFields) throws(ScenarioError) {
        var fields = fields
        self.init()
        pathLossExponent = try fields.double("path_loss_exponent", default: pathLossExponent)
        sigma = try fields.double("sigma_db", default: sigma)
        noiseFloor = try fields.double("noise_floor_dbm", default: noiseFloor)
        defaultMeasuredPower = try fields.int("default_measured_power") ?? defaultMeasuredPower
        for (index, value) in (try fields.array("channel_offsets_db") ?? []).enumerated() {
            switch value {
            case let .int(number) where abs(number) <= 30: channelOffsets.append(Double(number))
            case let .double(number) where abs(number) <= 30: channelOffsets.append(number)
            default:
                throw ScenarioError(path: fields.keyPath("channel_offsets_db[\(index)]"), message: "must be a number -30...30 dB")
            }
        }
        channelDwell = try fields.double("channel_dwell_s", default: channelDwell)
        try fields.finish()
        guard channelDwell > 0, channelDwell <= 3_600 else {
            throw ScenarioError(path: fields.keyPath("channel_dwell_s"), message: "must be > 0 and <= 3600 seconds")
        }
        guard pathLossExponent >= 1, pathLossExponent <= 6 else {
            throw ScenarioError(path: fields.keyPath("path_loss_exponent"), message: "must be 1...6")
        }
        guard sigma >= 0, sigma <= 20 else { throw ScenarioError(path: fields.keyPath("sigma_db"), message: "must be 0...20 dB") }
        guard noiseFloor >= -127, noiseFloor <= 0 else {
            throw ScenarioError(path: fields.keyPath("noise_floor_dbm"), message: "must be -127...0 dBm")
        }
        guard (-127...20).contains(defaultMeasuredPower) else {
            throw ScenarioError(path: fields.keyPath("default_measured_power"), message: "must be -127...20 dBm")
        }
    }
}
