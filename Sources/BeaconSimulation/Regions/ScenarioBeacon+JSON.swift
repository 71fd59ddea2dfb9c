import BeaconModel

extension ScenarioBeacon {
    init(_ fields: ScenarioFields, index: Int) throws(ScenarioError) {
        var fields = fields
        let format = try fields.string("format") ?? "ibeacon"
        var identifiers: [String] = []
        for (index, value) in (try fields.array("identifiers") ?? []).enumerated() {
            guard let text = try ScenarioFields.identifier(value, path: fields.keyPath("identifiers[\(index)]")) else {
                throw ScenarioError(path: fields.keyPath("identifiers[\(index)]"), message: "must not be null")
            }
            identifiers.append(text)
        }
        var address = BluetoothAddress(rawValue: 0x0C_0000_0000 | UInt64(index + 1))
        if let text = try fields.string("address") {
            guard let parsed = BluetoothAddress(string: text) else {
                throw ScenarioError(
                    path: fields.keyPath("address"), message: "'\(text)' is not an address like AA:BB:CC:DD:EE:FF")
            }
            address = parsed
        }
        let beaconID =
            try fields.string("id")
            ?? (identifiers.isEmpty ? "mac:\(address)" : "\(format):" + identifiers.joined(separator: ":").lowercased())
        var path: [Waypoint] = []
        for (index, value) in (try fields.array("path") ?? []).enumerated() {
            var point = try ScenarioFields(value, path: fields.keyPath("path[\(index)]"))
            guard let time = try point.double("t"), time >= 0 else {
                throw ScenarioError(path: point.keyPath("t"), message: "required, >= 0 seconds")
            }
            let x = try point.double("x", default: 0)
            let y = try point.double("y", default: 0)
            try point.finish()
            if let previous = path.last, time < previous.time {
                throw ScenarioError(path: point.keyPath("t"), message: "waypoints must be in time order")
            }
            path.append(Waypoint(time: time, x: x, y: y))
        }
        guard !path.isEmpty else {
            throw ScenarioError(path: fields.keyPath("path"), message: "required: at least one waypoint")
        }
        var dropouts: [Dropout] = []
        for (index, value) in (try fields.array("dropouts") ?? []).enumerated() {
            var entry = try ScenarioFields(value, path: fields.keyPath("dropouts[\(index)]"))
            guard let start = try entry.double("start_s"), start >= 0 else {
                throw ScenarioError(path: entry.keyPath("start_s"), message: "required, >= 0 seconds")
            }
            guard let length = try entry.double("duration_s"), length > 0 else {
                throw ScenarioError(path: entry.keyPath("duration_s"), message: "required, > 0 seconds")
            }
            try entry.finish()
            dropouts.append(Dropout(start: start, duration: length))
        }
        var random: (Double, Double, Double)?
        if var entry = try fields.object("random_dropouts") {
            let mean = try entry.double("mean_interval_s", default: 300)
            let low = try entry.double("min_s", default: 2)
            let high = try entry.double("max_s", default: 8)
            try entry.finish()
            guard mean > 0, low > 0, high >= low else {
                throw ScenarioError(path: entry.path, message: "needs mean_interval_s > 0 and 0 < min_s <= max_s")
            }
            random = (mean, low, high)
        }
        let rate = try fields.double("rate_hz", default: 10)
        let loss = try fields.double("loss", default: 0.3)
        let sigma = try fields.double("sigma_db")
        let attenuation = try fields.double("attenuation_db", default: 0)
        let power = fields.has("measured_power") ? try fields.int("measured_power") : -59
        let name = try fields.string("name")
        let awayTimeout = try fields.double("away_timeout_s")
        let reportsMotion = try fields.bool("reports_motion") ?? false
        try fields.finish()
        if let awayTimeout, !(awayTimeout > 0 && awayTimeout <= 86_400) {
            throw ScenarioError(path: fields.keyPath("away_timeout_s"), message: "must be > 0 and <= 86400 seconds")
        }
        guard rate > 0, rate <= 100 else {
            throw ScenarioError(path: fields.keyPath("rate_hz"), message: "must be > 0 and <= 100")
        }
        guard loss >= 0, loss < 1 else {
            throw ScenarioError(path: fields.keyPath("loss"), message: "must be 0 <= loss < 1")
        }
        if let sigma, !(sigma >= 0 && sigma <= 20) {
            throw ScenarioError(path: fields.keyPath("sigma_db"), message: "must be 0...20 dB")
        }
        guard attenuation >= 0, attenuation <= 60 else {
            throw ScenarioError(path: fields.keyPath("attenuation_db"), message: "must be 0...60 dB")
        }
        if let power, !(-127...20).contains(power) {
            throw ScenarioError(path: fields.keyPath("measured_power"), message: "must be -127...20 dBm")
        }
        self.init(
            beaconID: beaconID, format: format, identifiers: identifiers, address: address, name: name,
            measuredPower: power, rate: rate, loss: loss, sigma: sigma, attenuation: attenuation, path: path,
            dropouts: dropouts,
            randomDropouts: random.map { (meanInterval: $0.0, minLength: $0.1, maxLength: $0.2) })
        self.awayTimeout = awayTimeout
        self.reportsMotion = reportsMotion
    }
}
