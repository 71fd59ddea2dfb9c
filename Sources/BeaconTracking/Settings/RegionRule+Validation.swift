import BeaconConfigReading

extension RegionRule {
    /// Validates a whole `regions` list: every rule, plus duplicate names.
    public static func validate(_ rules: [RegionRule], path: String = "regions") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        var seen: [String: Int] = [:]
        for (index, rule) in rules.enumerated() {
            let rulePath = "\(path)[\(index)]"
            issues += rule.validate(path: rulePath)
            if let first = seen[rule.name] {
                issues.append(
                    ConfigIssue(
                        path: "\(rulePath).name",
                        message: "duplicate region name '\(rule.name)' (also \(path)[\(first)])"))
            } else {
                seen[rule.name] = index
            }
        }
        return issues
    }

    /// Problems with this rule; `path` is its key path, e.g. `regions[2]`.
    public func validate(path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func add(_ key: String, _ message: String) {
            issues.append(ConfigIssue(path: "\(path).\(key)", message: message))
        }

        if name.isEmpty { add("name", "must not be empty") }
        if name.unicodeScalars.contains(where: { "/+#".unicodeScalars.contains($0) || $0.value < 0x20 }) {
            add("name", "must not contain '/', '+', '#' or control characters (it becomes an MQTT topic level)")
        }
        issues += validateMatch(path: "\(path).match")
        if let taughtLike {
            if taughtLike.isEmpty || taughtLike.unicodeScalars.contains(where: { "/+#".unicodeScalars.contains($0) }) {
                add("taught_like", "expected a device's beacon id like ibeacon:<uuid>:<major>:<minor>")
            } else if !match.canSelect(beaconID: taughtLike) {
                add("taught_like", "the region's match can never select '\(taughtLike)', so it is never taught here")
            }
        }
        if let enter { issues += Self.validate(enter, key: "\(path).enter", above: true) }
        if let exit {
            let key = "\(path).exit"
            issues += Self.validate(exit, key: key, above: false)
            switch (enter, exit) {
            case (nil, _):
                add("exit", "an exit condition needs an enter condition")
            case let (.rssi(inLevel)?, .rssi(outLevel)):
                if !(outLevel < inLevel) {
                    add(
                        "exit.rssi_below",
                        "must be lower than enter.rssi_above (\(inLevel)) for hysteresis, got \(outLevel)")
                }
            case let (.distance(inMetres)?, .distance(outMetres)):
                if !(outMetres > inMetres) {
                    add(
                        "exit.distance_above",
                        "must be greater than enter.distance_below (\(inMetres)) for hysteresis, got \(outMetres)")
                }
            default:
                add("exit", "must use the same measure as enter (rssi with rssi, distance with distance)")
            }
        }
        if !(enterEvidence > 0 && enterEvidence <= 100_000) {
            add("enter_evidence_db", "must be > 0 and <= 100000, got \(enterEvidence)")
        }
        if !(enterMargin >= 0 && enterMargin <= 30) { add("enter_margin_db", "must be 0...30 dB, got \(enterMargin)") }
        if !(fastEnterEvidence >= 0 && fastEnterEvidence <= 100_000) {
            add("fast_enter_evidence_db", "must be 0 (off) ... 100000, got \(fastEnterEvidence)")
        }
        if !(fastEnterMargin >= 0 && fastEnterMargin <= 30) {
            add("fast_enter_margin_db", "must be 0...30 dB, got \(fastEnterMargin)")
        } else if fastEnterEvidence > 0, fastEnterMargin < enterMargin {
            add("fast_enter_margin_db", "must be at least enter_margin_db (\(enterMargin)), got \(fastEnterMargin)")
        }
        if !(exitEvidence > 0 && exitEvidence <= 100_000) {
            add("exit_evidence_db", "must be > 0 and <= 100000, got \(exitEvidence)")
        }
        if !(dropoutGrace > 0 && dropoutGrace <= 86_400) {
            add("dropout_grace_s", "must be > 0 and <= 86400 seconds, got \(dropoutGrace)")
        } else if exitPeriod > 0, dropoutGrace < exitPeriod {
            add("dropout_grace_s", "must be at least exit_period_s (\(exitPeriod)), got \(dropoutGrace)")
        }
        if !(minDwell >= 0 && minDwell <= 3_600) { add("min_dwell_s", "must be 0...3600 seconds, got \(minDwell)") }
        if !(exitPeriod > 0 && exitPeriod <= 86_400) {
            add("exit_period_s", "must be > 0 and <= 86400 seconds, got \(exitPeriod)")
        }
        if let filter { issues += filter.validate(path: "\(path).filter") }
        return issues
    }

    private static func validate(_ condition: RegionCondition, key: String, above: Bool) -> [ConfigIssue] {
        switch condition {
        case let .rssi(level):
            let name = above ? "rssi_above" : "rssi_below"
            if !(level >= -127 && level <= 20) {
                return [ConfigIssue(path: "\(key).\(name)", message: "must be -127...20 dBm, got \(level)")]
            }
        case let .distance(metres):
            let name = above ? "distance_below" : "distance_above"
            if !(metres > 0 && metres <= 1_000) {
                return [ConfigIssue(path: "\(key).\(name)", message: "must be > 0 and <= 1000 metres, got \(metres)")]
            }
        }
        return []
    }

    private func validateMatch(path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        let format = match.format?.lowercased()
        for (index, pattern) in match.identifiers.enumerated() {
            guard let pattern, pattern != "*" else { continue }
            let key = "\(path).identifiers[\(index)]"
            switch (format, index) {
            case ("ibeacon", 0), ("altbeacon", 0):
                if !Self.isUUID(pattern) {
                    issues.append(ConfigIssue(path: key, message: "'\(pattern)' is not a UUID (8-4-4-4-12 hex digits)"))
                }
            case ("ibeacon", 1), ("ibeacon", 2), ("altbeacon", 1), ("altbeacon", 2):
                if UInt16(pattern) == nil {
                    issues.append(ConfigIssue(path: key, message: "'\(pattern)' is not 0...65535"))
                }
            case ("eddystone-uid", 0):
                if !Self.isHex(pattern, bytes: 10) {
                    issues.append(ConfigIssue(path: key, message: "'\(pattern)' is not a 10-byte hex namespace"))
                }
            case ("eddystone-uid", 1):
                if !Self.isHex(pattern, bytes: 6) {
                    issues.append(ConfigIssue(path: key, message: "'\(pattern)' is not a 6-byte hex instance"))
                }
            default:
                if pattern.isEmpty {
                    issues.append(ConfigIssue(path: key, message: "must not be empty (use '*' for any)"))
                }
            }
        }
        if let pattern = match.namePattern, pattern.isEmpty {
            issues.append(ConfigIssue(path: "\(path).name", message: "must not be empty (omit it for any)"))
        }
        return issues
    }

    /// Whether the text is a UUID in its 8-4-4-4-12 hexadecimal form (the config reader and scenario files).
    public static func isUUID(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 36 else { return false }
        for (index, scalar) in scalars.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if scalar != "-" { return false }
            } else if !scalar.properties.isASCIIHexDigit {
                return false
            }
        }
        return true
    }

    package static func isHex(_ text: String, bytes: Int) -> Bool {
        let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
        return digits.unicodeScalars.count == bytes * 2
            && digits.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit }
    }
}
