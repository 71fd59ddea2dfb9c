import BeaconCore

extension TrackerSettings {
    /// The `tracker` block of a scenario file: the same keys as the YAML configuration.
    init(scenario fields: ScenarioFields) throws(ScenarioError) {
        var fields = fields
        self.init()
        maxBeacons = try fields.int("max_beacons") ?? maxBeacons
        awayTimeout = try fields.double("away_timeout_s", default: awayTimeout)
        staleMax = try fields.double("stale_max_s", default: staleMax)
        restoreMaxAge = try fields.double("restore_max_age_s", default: restoreMaxAge)
        statePersistInterval = try fields.double("state_persist_interval_s", default: statePersistInterval)
        if let presetName = try fields.string("sensitivity") {
            sensitivity = try RegionSensitivity(scenario: presetName, path: fields.keyPath("sensitivity"))
        }
        if let filterFields = try fields.object("filter") { filter = try FilterSettings(scenario: filterFields) }
        if var publishFields = try fields.object("publish") {
            publish.sightingInterval = try publishFields.double(
                "sighting_interval_s", default: publish.sightingInterval)
            publish.sightingMinDistance = try publishFields.double(
                "sighting_min_distance_m",
                default: publish.sightingMinDistance)
            try publishFields.finish()
        }
        try fields.finish()
    }
}

extension FilterSettings {
    init(scenario fields: ScenarioFields) throws(ScenarioError) {
        var fields = fields
        let kindName = try fields.string("kind") ?? FilterSettings.default.kind.rawValue
        guard let kind = Kind(rawValue: kindName) else {
            throw ScenarioError(
                path: fields.keyPath("kind"),
                message: "unknown filter '\(kindName)' (running-average, kalman or median-iqr)")
        }
        self.init(kind: kind)
        window = try fields.double("window_s", default: window)
        maxSamples = try fields.int("max_samples") ?? maxSamples
        processNoise = try fields.double("process_noise", default: processNoise)
        measurementNoise = try fields.double("measurement_noise", default: measurementNoise)
        fenceK = try fields.double("fence_k", default: fenceK)
        try fields.finish()
    }
}

extension RegionRule {
    /// One entry of `regions`: the same keys as the YAML configuration; `inherited` is the `tracker` block's
    /// `sensitivity`, used when the region names none.
    init(scenario fields: ScenarioFields, inherited: RegionSensitivity = .balanced) throws(ScenarioError) {
        var fields = fields
        guard let name = try fields.string("name") else {
            throw ScenarioError(path: fields.keyPath("name"), message: "required")
        }
        guard let matchFields = try fields.object("match") else {
            throw ScenarioError(path: fields.keyPath("match"), message: "required (use {} to match every beacon)")
        }
        let match = try RegionMatch(scenario: matchFields)
        var enter: RegionCondition?
        if var enterFields = try fields.object("enter") {
            enter = try Self.condition(&enterFields, rssiKey: "rssi_above", distanceKey: "distance_below")
        }
        var exit: RegionCondition?
        if var exitFields = try fields.object("exit") {
            exit = try Self.condition(&exitFields, rssiKey: "rssi_below", distanceKey: "distance_above")
        }
        self.init(name: name, match: match, enter: enter, exit: exit)
        apply(inherited)
        sensitivity = nil
        if let presetName = try fields.string("sensitivity") {
            apply(try RegionSensitivity(scenario: presetName, path: fields.keyPath("sensitivity")))
        }
        fastEnterEvidence = try fields.double("fast_enter_evidence_db", default: fastEnterEvidence)
        fastEnterMargin = try fields.double("fast_enter_margin_db", default: fastEnterMargin)
        enterEvidence = try fields.double("enter_evidence_db", default: enterEvidence)
        minDwell = try fields.double("min_dwell_s", default: minDwell)
        exitPeriod = try fields.double("exit_period_s", default: exitPeriod)
        enterMargin = try fields.double("enter_margin_db", default: enterMargin)
        exitEvidence = try fields.double("exit_evidence_db", default: exitEvidence)
        dropoutGrace = try fields.double("dropout_grace_s", default: dropoutGrace)
        if let filterFields = try fields.object("filter") { filter = try FilterSettings(scenario: filterFields) }
        try fields.finish()
    }

    private static func condition(
        _ fields: inout ScenarioFields, rssiKey: String,
        distanceKey: String
    ) throws(ScenarioError) -> RegionCondition {
        let rssi = try fields.double(rssiKey)
        let distance = try fields.double(distanceKey)
        try fields.finish()
        switch (rssi, distance) {
        case let (level?, nil): return .rssi(level)
        case let (nil, metres?): return .distance(metres)
        default: throw ScenarioError(path: fields.path, message: "needs exactly one of \(rssiKey), \(distanceKey)")
        }
    }
}

extension RegionMatch {
    /// `match`: `format`, `identifiers` (list, `*` or null for any), the shorthands `uuid`/`major`/`minor`
    /// (iBeacon, AltBeacon) and `namespace`/`instance` (Eddystone), `address`, `name` (glob).
    init(scenario fields: ScenarioFields) throws(ScenarioError) {
        var fields = fields
        self.init()
        format = try fields.string("format")
        if let list = try fields.array("identifiers") {
            identifiers = []
            for (index, value) in list.enumerated() {
                identifiers.append(try ScenarioFields.identifier(value, path: fields.keyPath("identifiers[\(index)]")))
            }
        }
        let positional: [[String]] = [["uuid", "major", "minor"], ["namespace", "instance"]]
        for keys in positional where keys.contains(where: { fields.has($0) }) {
            guard identifiers.isEmpty else {
                throw ScenarioError(
                    path: fields.keyPath(keys[0]), message: "use either identifiers or \(keys.joined(separator: "/"))")
            }
            for key in keys { identifiers.append(try fields.identifier(key)) }
        }
        if let uuid = identifiers.first ?? nil, fields.has("uuid"), !RegionRule.isUUID(uuid) {
            throw ScenarioError(
                kind: .invalid, path: fields.keyPath("uuid"), message: "'\(uuid)' is not a UUID (8-4-4-4-12 hex digits)"
            )
        }
        if let text = try fields.string("address") {
            guard let parsed = BluetoothAddress(string: text) else {
                throw ScenarioError(
                    kind: .invalid, path: fields.keyPath("address"),
                    message: "'\(text)' is not an address like AA:BB:CC:DD:EE:FF")
            }
            address = parsed
        }
        namePattern = try fields.string("name")
        try fields.finish()
    }
}

extension RegionSensitivity {
    init(scenario name: String, path: String) throws(ScenarioError) {
        guard let preset = RegionSensitivity(rawValue: name) else {
            throw ScenarioError(path: path, message: "must be fast, balanced or steady, got '\(name)'")
        }
        self = preset
    }
}
