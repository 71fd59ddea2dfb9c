import BeaconConfigReading

extension TrackerSettings {
    /// The `tracking:` section (tracker, presence, publish policy, state restore).
    public init(from r: inout ConfigReader) {
        self.init()
        maxBeacons = r.value("max_beacons", default: maxBeacons)
        awayTimeout = r.duration("away_timeout_s", default: awayTimeout)
        staleMax = r.duration("stale_max_s", default: staleMax)
        restoreMaxAge = r.duration("restore_max_age_s", default: restoreMaxAge)
        statePersistInterval = r.duration("state_persist_interval_s", default: statePersistInterval)
        filter = FilterSettings.read("filter", from: &r) ?? filter
        sensitivity = r.choice("sensitivity", default: sensitivity)
        publish = r.section("publish") { p in
            let d = PublishPolicy()
            return PublishPolicy(
                sightingInterval: p.duration("sighting_interval_s", default: d.sightingInterval),
                sightingMinDistance: p.value("sighting_min_distance_m", default: d.sightingMinDistance))
        }
    }
}

extension FilterSettings {
    /// `key: kalman` (a kind with its defaults) or a mapping with `kind` and its parameters. Nil when absent.
    /// A parameter of another kind (e.g. `fence_k` with `kalman`) is an error, not silently ignored.
    public static func read(_ key: String, from r: inout ConfigReader) -> FilterSettings? {
        guard let node = r.node(key) else {
            r.learnKeys(of: key) { FilterSettings(from: &$0) }
            return nil
        }
        if node.scalar != nil {
            return r.choice(key, as: Kind.self).map { FilterSettings(kind: $0) }
        }
        return r.read(node, at: r.path.appending(key), schema: r.schemaPath.isEmpty ? key : r.schemaPath + "." + key) {
            f in FilterSettings(from: &f)
        }
    }

    package init(from f: inout ConfigReader) {
        let kind = f.choice("kind", default: FilterSettings.default.kind)
        self.init(kind: kind)
        let windowed: Set<Kind> = [.runningAverage, .medianIQR]
        let applies: [(key: String, kinds: Set<Kind>)] = [
            ("window_s", windowed), ("max_samples", windowed), ("fence_k", [.medianIQR]),
            ("process_noise", [.kalman]), ("measurement_noise", [.kalman]),
        ]
        window = f.duration("window_s", default: window)
        maxSamples = f.value("max_samples", default: maxSamples)
        fenceK = f.value("fence_k", default: fenceK)
        processNoise = f.value("process_noise", default: processNoise)
        measurementNoise = f.value("measurement_noise", default: measurementNoise)
        for (key, kinds) in applies where f.has(key) && !kinds.contains(kind) {
            let users = Kind.allCases.filter { kinds.contains($0) }.map(\.rawValue).joined(separator: ", ")
            f.issue("has no effect with kind `\(kind.rawValue)` (it applies to \(users))", key: key)
        }
    }
}
