import BeaconModel

extension RegionEvaluator {
    /// Feeds one report to one membership: `sample` is the report's RSSI (or the region filter's output), nil
    /// when the report carried none; `motionWeight` scales the report's evidence (`MotionState`). Returns the event it causes: `.enter`, or `.state` when an `unknown` pair
    /// settles `outside` (published, so a consumer still holding an older retained `inside`, e.g. from before
    /// a restart whose state could not be restored, hears that the beacon is out).
    package func step(
        _ membership: inout RegionMembership, params: RegionParameters, sample: Double?, beaconID: String,
        format: String, measuredPower: Int?, motionWeight: Float = 1, at time: Timestamp,
        changes: inout RegionStateChanges
    ) -> RegionEvent.Kind? {
        guard let enter = params.enter else {
            return stepAnySighting(&membership, params: params, beaconID: beaconID, at: time, changes: &changes)
                ? .enter : nil
        }
        guard let sample else { return nil }
        guard
            updateLevels(
                &membership, enter: enter, exit: params.exit, beaconID: beaconID, format: format,
                measuredPower: measuredPower)
        else { return nil }
        let value = Float(sample)
        // The time this report stands for: since the pair's previous report, at most `maxReportWeight`.
        let gap = membership.lastSample.isFinite ? max(time - membership.lastSample, 0) : 0
        // Motion (`MotionState`): a beacon that says it moves weighs its evidence more, one at rest less.
        let weight = Float(min(gap, Self.maxReportWeight)) * motionWeight
        membership.lastSample = time
        if membership.state == .inside {
            let below =
                membership.exitLevel
                - min(
                    max(value, membership.exitLevel - Self.marginClamp),
                    membership.exitLevel + Self.marginClamp)
            membership.otherSum = min(params.exitEvidence, max(0, membership.otherSum + weight * below))
            if membership.otherSum == 0, weight > 0 || below <= 0 {
                membership.lastQualifying = time
                membership.outTime = 0
                if time - membership.lastPersisted >= settings.statePersistInterval {
                    persist(&membership, beaconID: beaconID, at: time, changes: &changes)
                }
            } else {
                membership.outTime += Float(min(gap, Self.heardGap))
            }
            return nil
        }
        let margin = min(max(value - membership.enterLevel, -Self.marginClamp), Self.marginClamp)
        // While unknown there is no state yet to keep from flapping: a smaller margin (the same evidence) on
        // both sides decides sooner which side of the level the beacon is on.
        let enterMargin = membership.state == .unknown ? params.unknownMargin : params.enterMargin
        let before = membership.enterSum
        membership.enterSum = max(0, membership.enterSum + weight * (margin - enterMargin))
        if before == 0, membership.enterSum > 0 { membership.runStart = time - Double(weight) }
        if Double(membership.enterSum) >= params.enterEvidence, time - membership.runStart >= params.minDwell {
            transition(&membership, to: .inside, at: time, beaconID: beaconID, changes: &changes)
            return .enter
        }
        if params.fastEnterEvidence > 0 {
            // Strong evidence: only reports clearing the higher margin add, any report below it takes away, so
            // the sum stays up only while reports agree; `fastMinReports` of them (on a hopping scanner, more
            // than one advertising channel) must have built it.
            let fastBefore = membership.fastSum
            membership.fastSum = max(0, membership.fastSum + weight * (margin - params.fastEnterMargin))
            if fastBefore == 0, membership.fastSum > 0 { membership.fastRunStart = time - Double(weight) }
            membership.fastReports = membership.fastSum > 0 ? min(membership.fastReports, 1_000) + 1 : 0
            if membership.fastSum >= params.fastEnterEvidence, membership.fastReports >= Self.fastMinReports,
                time - membership.fastRunStart >= params.minDwell
            {
                transition(&membership, to: .inside, at: time, beaconID: beaconID, changes: &changes)
                return .enter
            }
        }
        if membership.state == .unknown {
            membership.otherSum = max(0, membership.otherSum + weight * (-margin - enterMargin))
            if Double(membership.otherSum) >= params.enterEvidence {
                transition(&membership, to: .outside, at: time, beaconID: beaconID, changes: &changes)
                return .state
            }
        }
        return nil
    }

    /// Reports the fast path's run must hold before it decides (with 3, a 1 Hz beacon 1 m outside the
    /// boundary under independent 8 dB shadowing took it a few times an hour: RegionScenarioTests).
    static let fastMinReports: Int16 = 5
    /// Most seconds one report's evidence stands for (a report after a longer silence counts this much).
    static let maxReportWeight = 1.0
    /// Silences up to this long between reports count as heard time for the exit period; longer ones are
    /// dropouts, which only `dropoutGrace` ends.
    static let heardGap = 5.0
    /// A report's margin counts at most this many dB either way, so one outlier cannot decide.
    static let marginClamp: Float = 11
    /// While a pair is `unknown` its margin is this share of `enter_margin_db` (0.875 dB by default).
    static let unknownMarginShare: Float = 0.25

    /// Whether an inside membership is due to exit at `time`: heard without qualifying for the exit period
    /// (the current silence counted up to `heardGap`), or silent since qualifying for the dropout grace.
    /// Regions without an enter condition exit after the exit period without a sighting (iOS style). A silence
    /// that is usual for the beacon (`hold`, from `RegionEvaluator.silenceHold(of:away:)`) holds the region until
    /// the beacon turns away; reports heard below the exit level still end it.
    func exitDue(_ membership: RegionMembership, params: RegionParameters, hold: Timestamp, at time: Timestamp)
        -> Bool
    {
        time >= exitDeadline(membership, params: params, hold: hold)
    }

    /// The time at which an inside membership exits if nothing more is heard.
    func exitDeadline(_ membership: RegionMembership, params: RegionParameters, hold: Timestamp) -> Timestamp {
        guard params.enter != nil else { return max(membership.lastQualifying + params.exitPeriod, hold) }
        let grace = max(membership.lastQualifying + params.dropoutGrace, hold)
        let remaining = params.exitPeriod - Double(membership.outTime)
        guard remaining <= Self.heardGap else { return grace }
        return min(grace, max(membership.lastSample, membership.lastQualifying) + max(remaining, 0))
    }

    /// A region without an enter condition: inside once sighted for `minDwell` (reports no more than an exit
    /// period apart), every sighting qualifies.
    private func stepAnySighting(
        _ membership: inout RegionMembership, params: RegionParameters, beaconID: String,
        at time: Timestamp, changes: inout RegionStateChanges
    ) -> Bool {
        if membership.state == .inside {
            membership.lastQualifying = time
            if time - membership.lastPersisted >= settings.statePersistInterval {
                persist(&membership, beaconID: beaconID, at: time, changes: &changes)
            }
            return false
        }
        if membership.enterSum == 0 || time - membership.lastQualifying >= params.exitPeriod {
            membership.enterSum = 1
            membership.runStart = time
        }
        membership.lastQualifying = time
        if time - membership.runStart >= params.minDwell {
            transition(&membership, to: .inside, at: time, beaconID: beaconID, changes: &changes)
            return true
        }
        return false
    }

    /// Makes sure the membership's RSSI levels match the beacon's measured power; false when the distance model
    /// cannot translate a distance condition for this beacon. A pair with a taught link (`taught`) takes its
    /// levels from the link instead; the cache holds them the same way, so a report costs nothing more.
    private func updateLevels(
        _ membership: inout RegionMembership, enter: RegionCondition, exit: RegionCondition, beaconID: String,
        format: String, measuredPower: Int?
    ) -> Bool {
        let key = measuredPower.map { Int16(clamping: $0) } ?? RegionMembership.levelsForNilPower
        if membership.levelPower == key { return !membership.enterLevel.isNaN }
        membership.levelPower = key
        let region = Int(membership.region)
        if let levels = taught.link(beaconID: beaconID, region: names[region], like: rules[region].taughtLike)?.levels {
            membership.enterLevel = Float(levels.enter)
            membership.exitLevel = Float(levels.exit)
            return true
        }
        membership.enterLevel = level(for: enter, format: format, measuredPower: measuredPower).map(Float.init) ?? .nan
        membership.exitLevel = level(for: exit, format: format, measuredPower: measuredPower).map(Float.init) ?? .nan
        if membership.exitLevel.isNaN { membership.enterLevel = .nan }
        return !membership.enterLevel.isNaN
    }

    /// The RSSI at which the condition flips, for a beacon of this format and measured power.
    package func level(for condition: RegionCondition, format: String, measuredPower: Int?) -> Double? {
        condition.rssiLevel(estimator: estimator, format: format, measuredPower: measuredPower)
    }

    /// Inverts the distance model by bisection over -130...20 dBm (the model must decrease with RSSI, which
    /// every path-loss model does). Nil when the model gives no estimate.
    package static func rssiLevel(
        forDistance metres: Double, estimator: any DistanceEstimating, measuredPower: Int?,
        format: String
    ) -> Double? {
        var low = -130.0
        var high = 20.0
        guard let far = estimator.distance(rssi: low, measuredPower: measuredPower, format: format),
            let near = estimator.distance(rssi: high, measuredPower: measuredPower, format: format)
        else { return nil }
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
