import BeaconConfigReading
import BeaconModel

extension RegionRule {
    /// One element of `regions:`. Ranges and hysteresis are checked by `RegionRule.validate` (caller). The
    /// region's `sensitivity` (else `inherited`, the `tracking:` one) gives the defaults of the timing keys;
    /// keys set in the region override it.
    public init(from r: inout ConfigReader, inherited: RegionSensitivity = .balanced) {
        let name = r.requiredString("name") ?? ""
        var match = RegionMatch()
        if r.has("match") {
            match = r.section("match") { RegionMatch(from: &$0) }
        } else {
            r.declare("match")
            if !r.isStandIn {
                r.issue(
                    "missing required key `match` (write `match: {}` to watch every beacon)",
                    path: r.path.appending("match"), at: r.mark)
            }
        }
        let enter =
            r.optionalSection("enter") { c in
                RegionRule.condition(&c, rssiKey: "rssi_above", distanceKey: "distance_below")
            } ?? nil
        let exit =
            r.optionalSection("exit") { c in
                RegionRule.condition(&c, rssiKey: "rssi_below", distanceKey: "distance_above")
            } ?? nil
        let own = r.choice("sensitivity", as: RegionSensitivity.self)
        var d = RegionRule(name: "", match: RegionMatch())
        d.apply(own ?? inherited)
        self.init(
            name: name, match: match, enter: enter, exit: exit,
            enterEvidence: r.value("enter_evidence_db", default: d.enterEvidence),
            minDwell: r.duration("min_dwell_s", default: d.minDwell),
            exitPeriod: r.duration("exit_period_s", default: d.exitPeriod),
            filter: FilterSettings.read("filter", from: &r),
            enterMargin: r.value("enter_margin_db", default: d.enterMargin),
            exitEvidence: r.value("exit_evidence_db", default: d.exitEvidence),
            dropoutGrace: r.duration("dropout_grace_s", default: d.dropoutGrace),
            fastEnterEvidence: r.value("fast_enter_evidence_db", default: d.fastEnterEvidence),
            fastEnterMargin: r.value("fast_enter_margin_db", default: d.fastEnterMargin),
            sensitivity: own, taughtLike: r.string("taught_like"))
    }

    /// Exactly one of an RSSI level (dBm) and a distance (metres).
    package static func condition(_ c: inout ConfigReader, rssiKey: String, distanceKey: String) -> RegionCondition? {
        let rssi = c.value(rssiKey, as: Double.self)
        let distance = c.value(distanceKey, as: Double.self)
        switch (rssi, distance) {
        case let (level?, nil): return .rssi(level)
        case let (nil, metres?): return .distance(metres)
        case let (level?, .some):
            c.issue("set either `\(rssiKey)` or `\(distanceKey)`, not both", key: distanceKey)
            return .rssi(level)  // keeps later checks (exit needs enter) from piling up on this one mistake
        case (nil, nil):
            // Other keys there are reported as unknown (with a hint), which says more than this would.
            let others = c.entries.contains { $0.key != rssiKey && $0.key != distanceKey }
            if !c.has(rssiKey) && !c.has(distanceKey) && !others { c.issue("needs `\(rssiKey)` or `\(distanceKey)`") }
            return nil
        }
    }
}

extension RegionMatch {
    /// `match:`: `format`, `identifiers` (list; `*` or empty for any), or the shorthands `uuid`/`major`/`minor`
    /// (iBeacon, AltBeacon) and `namespace`/`instance` (Eddystone-UID); `address`; `name` (glob).
    public init(from m: inout ConfigReader) {
        self.init()
        format = m.string("format")
        if let node = m.node("identifiers") {
            let base = m.path.appending("identifiers")
            if let items = node.items {
                identifiers = items.enumerated().map { index, item in
                    if item.isNull { return nil }
                    guard let scalar = item.scalar else {
                        m.issue(
                            "expected an identifier, `*` or nothing, found \(item.kindDescription)",
                            path: base.appending(index: index), at: item.mark)
                        return nil
                    }
                    return scalar.text
                }
            } else {
                m.issue("expected a list of identifiers, found \(node.kindDescription)", key: "identifiers")
            }
        }
        let groups = [["uuid", "major", "minor"], ["namespace", "instance"]]
        for keys in groups where keys.contains(where: { m.has($0) }) {
            guard identifiers.isEmpty else {
                m.issue(
                    "use either `identifiers` or \(keys.map { "`\($0)`" }.joined(separator: "/"))",
                    key: keys.first { m.has($0) })
                break
            }
            identifiers = keys.map { key in RegionMatch.shorthand(key, from: &m) }
            while identifiers.last.map({ $0 == nil }) == true { identifiers.removeLast() }
        }
        m.declare("uuid", "major", "minor", "namespace", "instance")
        address = m.value("address", expecting: "a Bluetooth address like AA:BB:CC:DD:EE:FF") {
            BluetoothAddress(string: $0)
        }
        namePattern = m.string("name")
    }

    /// A shorthand identifier, checked by its name (a `uuid` is a UUID whatever the format says); `*` or
    /// absent is "any". A bad value is reported here and becomes "any", so it is not reported twice.
    static func shorthand(_ key: String, from m: inout ConfigReader) -> String? {
        guard let text = m.string(key), text != "*" else { return nil }
        let valid: String?
        switch key {
        case "uuid": valid = try? ConfigUUID.decodeConfig(ConfigScalar(text)).text
        case "major", "minor": valid = UInt16(text).map(String.init)
        case "namespace": valid = HexBytes.parse(text).flatMap { $0.count == 10 ? text.lowercased() : nil }
        default: valid = HexBytes.parse(text).flatMap { $0.count == 6 ? text.lowercased() : nil }
        }
        if valid == nil {
            let expected =
                [
                    "uuid": "a UUID (8-4-4-4-12 hex digits)", "major": "0...65535", "minor": "0...65535",
                    "namespace": "a 10-byte hex namespace",
                ][key] ?? "a 6-byte hex instance"
            m.issue("`\(text)` is not \(expected)", key: key)
        }
        return valid
    }
}
