extension RegionEvaluator {
    /// Feeds one report to one membership. Returns true when the beacon entered the region (the `enter` event
    /// is left to the caller through the returned flag and `pendingEnter`).
    func step(_ membership: inout RegionMembership, rule: RegionRule, beacon: TrackedBeacon, rssi: Int?,
              at time: Timestamp, changes: inout RegionStateChanges) -> Bool {
        guard let enter = rule.enter else {
            return stepAnySighting(&membership, rule: rule, beaconID: beacon.beaconID, at: time, changes: &changes)
        }
        guard let rssi else { return false }
        var sample = Double(rssi)
        if membership.filter != nil {
            sample = membership.filter!.add(rssi, at: time)
        }
        guard updateLevels(&membership, enter: enter, exit: rule.effectiveExit ?? enter.defaultExit,
                           beacon: beacon) else { return false }
        let value = Float(sample)
        if membership.state == .inside {
            membership.otherSum = max(0, membership.otherSum + (membership.exitLevel - value))
            if membership.otherSum == 0 {
                membership.lastQualifying = time
                if time - membership.lastPersisted >= settings.statePersistInterval {
                    persist(&membership, beaconID: beacon.beaconID, at: time, changes: &changes)
                }
            }
            return false
        }
        let before = membership.enterSum
        membership.enterSum = max(0, membership.enterSum + (value - membership.enterLevel))
        if before == 0, membership.enterSum > 0 { membership.runStart = time }
        if Double(membership.enterSum) >= rule.enterEvidence, time - membership.runStart >= rule.minDwell {
            transition(&membership, to: .inside, at: time, beaconID: beacon.beaconID, changes: &changes)
            return true
        }
        if membership.state == .unknown {
            membership.otherSum = max(0, membership.otherSum + (membership.enterLevel - value))
            if Double(membership.otherSum) >= rule.enterEvidence {
                transition(&membership, to: .outside, at: time, beaconID: beacon.beaconID, changes: &changes)
            }
        }
        return false
    }

    /// A region without an enter condition: inside once sighted for `minDwell` (reports no more than an exit
    /// period apart), every sighting qualifies.
    private func stepAnySighting(_ membership: inout RegionMembership, rule: RegionRule, beaconID: String,
                                 at time: Timestamp, changes: inout RegionStateChanges) -> Bool {
        if membership.state == .inside {
            membership.lastQualifying = time
            if time - membership.lastPersisted >= settings.statePersistInterval {
                persist(&membership, beaconID: beaconID, at: time, changes: &changes)
            }
            return false
        }
        if membership.enterSum == 0 || time - membership.lastQualifying >= rule.exitPeriod {
            membership.enterSum = 1
            membership.runStart = time
        }
        membership.lastQualifying = time
        if time - membership.runStart >= rule.minDwell {
            transition(&membership, to: .inside, at: time, beaconID: beaconID, changes: &changes)
            return true
        }
        return false
    }

    /// Makes sure the membership's RSSI levels match the beacon's measured power; false when the distance model
    /// cannot translate a distance condition for this beacon.
    private func updateLevels(_ membership: inout RegionMembership, enter: RegionCondition, exit: RegionCondition,
                              beacon: TrackedBeacon) -> Bool {
        let key = beacon.measuredPower.map { Int16(clamping: $0) } ?? RegionMembership.levelsForNilPower
        if membership.levelPower == key { return !membership.enterLevel.isNaN }
        membership.levelPower = key
        membership.enterLevel = level(for: enter, beacon: beacon).map(Float.init) ?? .nan
        membership.exitLevel = level(for: exit, beacon: beacon).map(Float.init) ?? .nan
        if membership.exitLevel.isNaN { membership.enterLevel = .nan }
        return !membership.enterLevel.isNaN
    }

    /// The RSSI at which the condition flips, for this beacon.
    func level(for condition: RegionCondition, beacon: TrackedBeacon) -> Double? {
        switch condition {
        case let .rssi(level): return level
        case let .distance(metres):
            return RegionEvaluator.rssiLevel(forDistance: metres, estimator: estimator,
                                             measuredPower: beacon.measuredPower, format: beacon.format)
        }
    }

    /// Inverts the distance model by bisection over -130...20 dBm (the model must decrease with RSSI, which
    /// every path-loss model does). Nil when the model gives no estimate.
    static func rssiLevel(forDistance metres: Double, estimator: any DistanceEstimating, measuredPower: Int?,
                          format: String) -> Double? {
        var low = -130.0, high = 20.0
        guard let far = estimator.distance(rssi: low, measuredPower: measuredPower, format: format),
              let near = estimator.distance(rssi: high, measuredPower: measuredPower, format: format) else { return nil }
        if far <= metres { return low }
        if near >= metres { return high }
        for _ in 0..<32 {
            let mid = (low + high) / 2
            guard let distance = estimator.distance(rssi: mid, measuredPower: measuredPower, format: format) else {
                return nil
            }
            if distance > metres { low = mid } else { high = mid }
        }
        return (low + high) / 2
    }
}
