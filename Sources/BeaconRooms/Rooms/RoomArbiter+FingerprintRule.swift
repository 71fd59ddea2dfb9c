import BeaconModel

/// The fingerprint margin rule (issue 43; docs/rooms.md, "Session 29: a fingerprint margin rule"). When
/// `fingerprint_rule` is on (and `fingerprint_classifier` off) and every room of the site is trained (as the
/// classifier needs: `classifiedRooms`), the level rule's temporal machinery decides, but with rooms scored by how
/// near the beacon's levels are to each room's fingerprint means (as `oracle-fp` does) instead of by the room's
/// loudest gateway:
/// - per online gateway, the rule's own two levels (`levels`: the fast level smoothed over `smoothingTime` and the
///   median of `medianWindow`, with the stale decay; evidence older than `evidenceMaxAge` is not heard);
/// - a room's distance is the mean squared difference between those levels (less the beacon's offset,
///   `fingerprint_rule_offset`) and its fingerprint's means, over the site's online gateways; a side that did not
///   hear a gateway (the beacon now, or the room's walk) counts as `unheardLevel`, and every level and mean is
///   taken as at least that, so a loud gateway the walk never heard counts against the room and two silences
///   agree;
/// - the lead of a challenger over the current room (`lead`) is the linear discriminant between the two
///   fingerprints, (distance to the current room − distance to the challenger) / the fingerprints' own RMS
///   separation, scaled by √(n/2) over the n gateways compared: 0 at the midpoint, and with independent errors of σ
///   per gateway its noise is √2·σ, that of the level rule's difference of two links, so the rule's `margin` and
///   `slowMargin` (dB) keep their meaning and their false-alarm rate;
/// - the rise (`rise`) is the fast level's lead over the median on the gateways the challenger's fingerprint hears
///   louder than the current room's, weighted by how much louder (one gateway: exactly the level rule's rise): an
///   approach to the challenger, not a body in front of the current room's gateway;
/// - fast path: the nearest room by fast levels leads by `margin` and rises by `rise`, for `dwell` of accumulated
///   time (counting down while it fails, as the rule); slow path: the nearest room by medians leads by `slowMargin`
///   on the medians and is not behind on the fast levels, continuously for `slowDwell`; the first room is the
///   nearest by fast levels after `settleTime`.
/// `not_home`, `unknown` (a dark room: the room held against is the dark one, which cannot win; no slow path, the
/// fast path holds for `slowDwell`, as the rule), adopt and restore keep their meaning.
extension RoomArbiter {
    /// The level (calibrated dBm) a side that did not hear a gateway counts as: the receivers' sensitivity, where
    /// reports vanish (field notes, "below about −100 dBm packets vanish"; the simulator's `noise_floor_dbm`).
    public static let unheardLevel = -100.0

    /// Whether the fingerprint margin rule decides (every room trained, the rule on, the classifier off).
    var decidesByFingerprintRule: Bool {
        !settings.classifier.enabled && settings.classifier.rule && classifiedRooms != nil
    }

    /// The online gateways' levels of one kind (fast or median, stale decay applied), heard within
    /// `evidenceMaxAge`.
    func gatewayLevels(_ track: Track, now: Timestamp, median: Bool) -> [String: Double] {
        var result: [String: Double] = [:]
        for (gateway, evidence) in track.evidence {
            guard let current = currentLevels(of: gateway, evidence, now: now) else { continue }
            result[gateway] = median ? current.median : current.fast
        }
        return result
    }

    /// The offset common to the beacon's links against a room's fingerprint: the mean difference over the
    /// gateways heard now that the fingerprint has (two or more; else 0), bounded to ±`offsetLimit`.
    func meanDifference(_ levels: [String: Double], under fingerprint: RoomFingerprint) -> Double {
        var sum = 0.0
        var count = 0
        for (gateway, level) in levels {
            guard let mean = fingerprint.levels[gateway]?.mean else { continue }
            sum += level - mean
            count += 1
        }
        guard count >= 2 else { return 0 }
        let limit = settings.classifier.offsetLimit
        return min(max(sum / Double(count), -limit), limit)
    }

    /// What one decision compares, computed once per decision: the site's online gateways, sorted, and per room
    /// its fingerprint's means on them (`unheardLevel` where its walk did not hear a gateway, every mean at least
    /// that).
    struct FingerprintComparison {
        var gateways: [String]
        var expected: [String: [Double]]

        /// A room's means on `gateways` (from `expected`, else from its fingerprint).
        func means(_ room: String, _ fingerprint: RoomFingerprint) -> [Double] {
            expected[room]
                ?? gateways.map {
                    max(fingerprint.levels[$0]?.mean ?? RoomArbiter.unheardLevel, RoomArbiter.unheardLevel)
                }
        }
    }

    /// The comparison for one decision among `rooms` (the site's gateways less the offline ones).
    func fingerprintComparison(rooms: [String]) -> FingerprintComparison {
        var comparison = FingerprintComparison(
            gateways: settings.gatewayRooms.keys.filter { !offlineGateways.contains($0) }.sorted(), expected: [:])
        for room in rooms {
            guard let fingerprint = fingerprints[room] else { continue }
            comparison.expected[room] = comparison.means(room, fingerprint)
        }
        return comparison
    }

    /// Per gateway of the comparison, the beacon's level less `shift` (`unheardLevel` when not heard), at least
    /// `unheardLevel`.
    func observed(_ levels: [String: Double], shift: Double, on gateways: [String]) -> [Double] {
        gateways.map { gateway in
            levels[gateway].map { max($0 - shift, Self.unheardLevel) } ?? Self.unheardLevel
        }
    }

    /// The shift taken out of the beacon's levels against `fingerprint` (`fingerprint_rule_offset`).
    func ruleShift(_ levels: [String: Double], under fingerprint: RoomFingerprint, learned: Double) -> Double {
        switch settings.classifier.ruleOffset {
        case .none: 0
        case .learned: learned
        case .differences: meanDifference(levels, under: fingerprint)
        }
    }

    /// Mean squared difference (dB²) between the beacon's levels and each room's fingerprint means.
    func fingerprintDistances(
        _ levels: [String: Double], rooms: [String], learned: Double, comparison: FingerprintComparison
    ) -> [String: Double] {
        var result: [String: Double] = [:]
        for room in rooms {
            guard let fingerprint = fingerprints[room] else { continue }
            let o = observed(
                levels, shift: ruleShift(levels, under: fingerprint, learned: learned), on: comparison.gateways)
            let e = comparison.means(room, fingerprint)
            guard !o.isEmpty else { continue }
            var sum = 0.0
            for (a, b) in zip(o, e) { sum += (a - b) * (a - b) }
            result[room] = sum / Double(o.count)
        }
        return result
    }

    /// The challenger's lead over the current room in the level rule's dB (the linear discriminant between the
    /// two fingerprints, scaled to the noise of a difference of two links; see the extension's comment).
    func lead(
        _ distances: [String: Double], from current: String, to challenger: String,
        comparison: FingerprintComparison
    ) -> Double {
        guard let own = distances[current], let other = distances[challenger],
            let a = fingerprints[current], let b = fingerprints[challenger]
        else { return -.infinity }
        let ea = comparison.means(current, a)
        let eb = comparison.means(challenger, b)
        var separation = 0.0
        var compared = 0
        for (x, y) in zip(ea, eb) where x > Self.unheardLevel || y > Self.unheardLevel {
            separation += (x - y) * (x - y)
            compared += 1
        }
        guard compared > 0, separation > 0 else { return 0 }
        let n = Double(compared)
        let rms = (separation / n).squareRoot()
        return (own - other) / rms * (n / 2).squareRoot()
    }

    /// The challenger's rise against the current room: fast level less median on the gateways heard now that
    /// `challenger`'s fingerprint hears louder than `current`'s, weighted by how much louder (unit weights' norm).
    func fingerprintRise(
        fast: [String: Double], median: [String: Double], from current: String, to challenger: String,
        comparison: FingerprintComparison
    ) -> Double {
        guard let a = fingerprints[current], let b = fingerprints[challenger] else { return 0 }
        let ea = comparison.means(current, a)
        let eb = comparison.means(challenger, b)
        var sum = 0.0
        var norm = 0.0
        for (index, gateway) in comparison.gateways.enumerated() {
            guard let f = fast[gateway], let m = median[gateway] else { continue }
            let weight = eb[index] - ea[index]
            guard weight > 0 else { continue }
            sum += weight * (f - m)
            norm += weight * weight
        }
        return norm > 0 ? sum / norm.squareRoot() : 0
    }

    /// The nearest room (ties: the first by name).
    func nearest(_ distances: [String: Double]) -> String? {
        distances.min { ($0.value, $0.key) < ($1.value, $1.key) }?.key
    }

    /// The decision by the fingerprint margin rule for a beacon heard within the away timeout (the caller has
    /// handled `not_home`); mirrors the level rule's first decision, `unknown`, fast and slow paths.
    mutating func decideByFingerprintRule(
        _ id: String, track: inout Track, rooms: [String], now: Timestamp
    ) -> [RoomChange] {
        let fast = gatewayLevels(track, now: now, median: false)
        let median = gatewayLevels(track, now: now, median: true)
        guard !fast.isEmpty else { return [] }
        learnRuleOffset(&track, median: median, now: now)
        let offset = track.belief.offset
        let comparison = fingerprintComparison(rooms: rooms)
        let fastDistances = fingerprintDistances(fast, rooms: rooms, learned: offset, comparison: comparison)
        let slowDistances = fingerprintDistances(median, rooms: rooms, learned: offset, comparison: comparison)
        guard let best = nearest(fastDistances) else { return [] }
        func loudest(in room: String) -> String? {
            fast.filter { settings.gatewayRooms[$0.key] == room }.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
        }
        let relit = track.room == .some(Self.unknownRoom) && track.darkRoom == nil
        if relit, awaitsRelitReport(track, now: now) { return [] }
        guard case let .some(.some(current)) = track.room, !relit else {
            guard let heardSince = track.heardSince, now - heardSince >= settings.settleTime else { return [] }
            let hadRoom = track.room != nil
            placeFirst(id, &track, in: best, now: now)
            track.fastChallenger = nil
            track.fastHeld = 0
            track.slowChallenger = nil
            return [
                RoomChange(
                    beaconID: id, time: now, from: relit ? Self.unknownRoom : nil, to: best, hadRoom: hadRoom,
                    gatewayID: loudest(in: best))
            ]
        }
        track.updated = now
        // While the beacon's room is dark it is held against that room (which cannot win: `unknown` until back).
        let dark = track.darkRoom != nil
        let incumbent = track.darkRoom ?? current
        var winner: String?
        let elapsed = max(0, min(now - track.lastDecided, 1))
        track.lastDecided = now
        if best != incumbent {
            if track.fastChallenger != best {
                track.fastChallenger = best
                track.fastHeld = 0
            }
            let ahead =
                lead(fastDistances, from: incumbent, to: best, comparison: comparison) >= settings.margin
                && fingerprintRise(fast: fast, median: median, from: incumbent, to: best, comparison: comparison)
                    >= settings.rise
            track.fastHeld = max(0, track.fastHeld + (ahead ? elapsed : -elapsed))
            if ahead, track.fastHeld >= (dark ? settings.slowDwell : settings.dwell) { winner = best }
        } else {
            track.fastChallenger = nil
            track.fastHeld = 0
        }
        if !dark, let slowBest = nearest(slowDistances), slowBest != incumbent,
            lead(slowDistances, from: incumbent, to: slowBest, comparison: comparison) >= settings.slowMargin,
            lead(fastDistances, from: incumbent, to: slowBest, comparison: comparison) >= 0
        {
            if track.slowChallenger != slowBest {
                track.slowChallenger = slowBest
                track.slowSince = now
            }
            if winner == nil, now - track.slowSince >= settings.slowDwell { winner = slowBest }
        } else {
            track.slowChallenger = nil
        }
        guard let winner else { return [] }
        let gain = lead(fastDistances, from: incumbent, to: winner, comparison: comparison)
        move(id, &track, to: winner, now: now)
        return [
            RoomChange(
                beaconID: id, time: now, from: current, to: winner, hadRoom: true, lead: gain.isFinite ? gain : nil,
                gatewayID: loudest(in: winner))
        ]
    }

    /// `fingerprint_rule_offset: learned`: the beacon's offset against the trainer follows, with the classifier's
    /// time constant and limit (`device_offset_time_s`, `device_offset_max_db`), the median of median level − mean
    /// over the gateways heard now that the decided room's fingerprint has (two or more).
    func learnRuleOffset(_ track: inout Track, median: [String: Double], now: Timestamp) {
        let model = settings.classifier
        let step = max(0, now - (track.belief.updated ?? now))
        track.belief.updated = max(track.belief.updated ?? now, now)
        guard model.ruleOffset == .learned, step > 0, case let .some(.some(room)) = track.room,
            let fingerprint = fingerprints[room]
        else { return }
        let residuals = median.compactMap { gateway, level in fingerprint.levels[gateway].map { level - $0.mean } }
            .sorted()
        guard residuals.count >= 2 else { return }
        let middle = residuals.count / 2
        let target = residuals.count % 2 == 1 ? residuals[middle] : (residuals[middle - 1] + residuals[middle]) / 2
        let rate = 1 - ElementaryMath.exp(-step / model.offsetTime)
        let offset = track.belief.offset + rate * (target - track.belief.offset)
        track.belief.offset = min(max(offset, -model.offsetLimit), model.offsetLimit)
    }
}
