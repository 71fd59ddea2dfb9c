import BeaconModel

/// The fingerprint classifier (issue 29, "A room classifier that uses them"; docs/rooms.md, "The classifier (issue
/// 29, session 19)"). When enabled (`fingerprint_classifier`, off by default) and every room of the site (a room
/// without a gateway of its own included: `roomsWithoutGateway`) has a fingerprint naming one of its gateways (and
/// there are at least two rooms), the arbiter decides rooms from per-room probabilities instead of the level rule:
/// - each gateway's current level is the median of its reports of the last `levelWindow` seconds (heard within
///   `staleAfter`, online), less the beacon's own offset;
/// - per room, the log-likelihood of those levels under its fingerprint: per gateway a Gaussian with the
///   fingerprint's mean and a spread of max(spread, `spreadFloor`) with `evidenceNoise` added in quadrature
///   (deviations beyond `Self.maximumDeviation` spreads count as that many: one blocked link cannot carry the
///   decision), plus ln(heard share) for a gateway heard now or ln(1 − heard share) for one silent now, the share
///   bounded to `missingFloor...1 − missingFloor`; a gateway heard now that the fingerprint never heard has a flat
///   density over `Self.untrainedWidth` dB;
/// - a forward filter over the rooms: staying is likely, a change to any other room has `changeRate` per second;
///   the likelihood is weighted by the seconds elapsed over `observationTime` (evidence, not report count);
/// - a challenger whose probability is at least `enterProbability` while the current room's is below
///   `exitProbability`, continuously for `dwell` seconds, wins; the first room is the most likely one after
///   `settleTime`.
/// `not_home`, `unknown` (a dark room), adopt and restore keep their meaning: the classifier only replaces how the
/// next room is chosen.
extension RoomArbiter {
    /// A beacon's classifier state.
    struct Belief: Sendable {
        /// Per room of the site, summing to 1 (empty before the first update).
        package var probabilities: [String: Double] = [:]
        /// The beacon's level against the training device's, dB (its transmit power and antenna).
        package var offset: Double = 0
        package var updated: Timestamp?
        /// Per room and gateway, the probability that the link is blocked now (`fingerprint_blocking`).
        var blocked: [String: [String: Double]] = [:]
        var challenger: String?
        var challengerSince: Timestamp = 0
    }

    /// Deviations beyond this many spreads cost no more (a body in the way of one link, 8-15 dB).
    static let maximumDeviation = 3.0
    /// The width (dB) of the flat density of a level at a gateway the room's fingerprint never heard.
    static let untrainedWidth = 60.0
    /// Longest step (s) the filter takes at once (the caller ticks at least once a second).
    static let maximumStep = 2.0

    /// The rooms the classifier (or the fingerprint margin rule) decides among, sorted: the gateways' rooms and the
    /// rooms without a gateway; nil when the level rule decides (neither enabled, fewer than two rooms, or a room without a
    /// fingerprint that names one of the site's gateways).
    var classifiedRooms: [String]? {
        guard settings.classifier.enabled || settings.classifier.rule else { return nil }
        let rooms = Set(settings.gatewayRooms.values).union(settings.roomsWithoutGateway)
        guard rooms.count >= 2 else { return nil }
        for room in rooms {
            guard fingerprints[room]?.heardByAny(of: settings.gatewayRooms) == true else { return nil }
        }
        return rooms.sorted()
    }

    /// Whether decisions come from the fingerprints (every room of the site trained) rather than the level rule: the
    /// classifier's, or the fingerprint margin rule's (`decidesByFingerprintRule`).
    public var decidesByFingerprints: Bool { classifiedRooms != nil }

    /// Every room's probability for a beacon (summing to 1); empty while the level rule decides or before the
    /// beacon's first evidence.
    public func probabilities(of beaconID: String) -> [String: Double] {
        guard decidesByFingerprints, settings.classifier.enabled else { return [:] }
        return tracks[beaconID]?.belief.probabilities ?? [:]
    }

    /// The beacon's learned offset against the training device, dB (nil for a beacon not seen).
    public func deviceOffset(of beaconID: String) -> Double? { tracks[beaconID]?.belief.offset }

    /// Each online gateway's current level (the median of its last `levelWindow` seconds of reports), for the
    /// gateways heard within `staleAfter` of `now`.
    func currentLevels(_ track: Track, now: Timestamp) -> [String: Double] {
        var result: [String: Double] = [:]
        for (gateway, evidence) in track.evidence where !offlineGateways.contains(gateway) {
            guard settings.gatewayRooms[gateway] != nil, now - evidence.lastHeard <= settings.staleAfter else {
                continue
            }
            let cutoff = evidence.lastHeard - settings.classifier.levelWindow
            var recent: [Double] = []
            for sample in evidence.samples.reversed() {
                guard sample.time > cutoff else { break }
                recent.append(sample.value)
            }
            guard !recent.isEmpty else { continue }
            recent.sort()
            let middle = recent.count / 2
            result[gateway] = recent.count % 2 == 1 ? recent[middle] : (recent[middle - 1] + recent[middle]) / 2
        }
        return result
    }

    /// The log-likelihood (nats) of `levels` (already less the beacon's offset) under `fingerprint`, over the
    /// site's online gateways. With `differences`, the Gaussian terms are of the levels less the room's own common
    /// offset (`commonOffset`): only how the gateways differ counts, not how loud the beacon is overall.
    func logLikelihood(_ levels: [String: Double], under fingerprint: RoomFingerprint) -> Double {
        let model = settings.classifier
        let shift = model.differences ? commonOffset(levels, under: fingerprint) : 0
        var total = 0.0
        for gateway in settings.gatewayRooms.keys where !offlineGateways.contains(gateway) {
            let trained = fingerprint.levels[gateway]
            let share = min(max(trained?.heardShare ?? 0, model.missingFloor), 1 - model.missingFloor)
            guard let level = levels[gateway] else {
                total += ElementaryMath.ln(1 - share)
                continue
            }
            total += ElementaryMath.ln(share)
            guard let trained else {
                total -= ElementaryMath.ln(Self.untrainedWidth)
                continue
            }
            let sigma = spread(of: trained)
            let deviation = min(abs(level - shift - trained.mean) / sigma, Self.maximumDeviation)
            total -= 0.5 * deviation * deviation + ElementaryMath.ln(sigma)
        }
        return total
    }

    /// `logLikelihood` with each heard link's Gaussian replaced by a mixture of clear and blocked (`blocked`: per
    /// gateway, the probability that the link is blocked, carried from step to step and updated here), the
    /// evidence weighted by `weight` as in the forward filter: a two-state chain per link (blocked episodes start
    /// at 1/`blockingInterval` per second and end at 1/`blockingLength`), its level under blocking a Gaussian
    /// `blockingDepth` below the fingerprint's mean with the depth's variance added. A link that stays low for the
    /// length of a body in the way is soon taken as blocked and stops counting against the room; a link louder
    /// than the fingerprint (which no body causes) counts as before. Heard shares and untrained gateways as in
    /// `logLikelihood`.
    func blockingLogLikelihood(
        _ levels: [String: Double], under fingerprint: RoomFingerprint, blocked: inout [String: Double],
        step: Double, weight: Double
    ) -> Double {
        let model = settings.classifier
        let shift = model.differences ? commonOffset(levels, under: fingerprint) : 0
        let start = 1 - ElementaryMath.exp(-step / RoomClassifierSettings.blockingInterval)
        let end = 1 - ElementaryMath.exp(-step / RoomClassifierSettings.blockingLength)
        let steady =
            RoomClassifierSettings.blockingLength
            / (RoomClassifierSettings.blockingLength + RoomClassifierSettings.blockingInterval)
        var total = 0.0
        for gateway in settings.gatewayRooms.keys where !offlineGateways.contains(gateway) {
            let trained = fingerprint.levels[gateway]
            let share = min(max(trained?.heardShare ?? 0, model.missingFloor), 1 - model.missingFloor)
            let was = blocked[gateway] ?? steady
            let prior = was * (1 - end) + (1 - was) * start
            blocked[gateway] = prior
            guard let level = levels[gateway] else {
                total += weight * ElementaryMath.ln(1 - share)
                continue
            }
            total += weight * ElementaryMath.ln(share)
            guard let trained else {
                total -= weight * ElementaryMath.ln(Self.untrainedWidth)
                continue
            }
            let sigma = spread(of: trained)
            let clearDeviation = min(abs(level - shift - trained.mean) / sigma, Self.maximumDeviation)
            let clear = -0.5 * clearDeviation * clearDeviation - ElementaryMath.ln(sigma)
            let blockedSigma = (sigma * sigma + RoomClassifierSettings.blockingDepthVariance).squareRoot()
            let blockedDeviation = min(
                abs(level - shift - trained.mean + RoomClassifierSettings.blockingDepth) / blockedSigma,
                Self.maximumDeviation)
            let low = -0.5 * blockedDeviation * blockedDeviation - ElementaryMath.ln(blockedSigma)
            // ln((1 − prior)·e^(w·clear) + prior·e^(w·low)), computed from the larger term.
            let a = ElementaryMath.ln(max(1 - prior, 1e-300)) + weight * clear
            let b = ElementaryMath.ln(max(prior, 1e-300)) + weight * low
            let top = max(a, b)
            let sum = ElementaryMath.exp(a - top) + ElementaryMath.exp(b - top)
            total += top + ElementaryMath.ln(sum)
            blocked[gateway] = ElementaryMath.exp(b - top) / sum
        }
        return total
    }

    /// The spread (dB) of a level under a fingerprint's gateway: its trained spread (at least the floor; the floor
    /// alone with `commonSpread`) and the evidence's own noise in quadrature.
    func spread(of trained: RoomFingerprint.Level) -> Double {
        let model = settings.classifier
        let floored = model.commonSpread ? model.spreadFloor : max(trained.spread, model.spreadFloor)
        return (floored * floored + model.evidenceNoise * model.evidenceNoise).squareRoot()
    }

    /// The offset (dB) common to every link of the beacon that best fits `levels` to the room's fingerprint means:
    /// a posture or a hand on the tag (3-21 dB, shared across the links of one body; field notes) moves every
    /// gateway's level together, which the slow device offset cannot follow. It maximises the Gaussian terms as
    /// `logLikelihood` caps them (a deviation counts at most `maximumDeviation` spreads): from the median
    /// difference, the spread-weighted mean of the differences within the cap, repeated until the set within it
    /// stops changing (each pass lowers the capped sum of squares); bounded to ±`offsetLimit` as the device offset
    /// is. Zero when the fingerprint has none of the heard gateways.
    func commonOffset(_ levels: [String: Double], under fingerprint: RoomFingerprint) -> Double {
        let limit = settings.classifier.offsetLimit
        var differences: [(value: Double, weight: Double, sigma: Double)] = []
        for (gateway, level) in levels {
            guard let trained = fingerprint.levels[gateway] else { continue }
            let sigma = spread(of: trained)
            differences.append((level - trained.mean, 1 / (sigma * sigma), sigma))
        }
        guard !differences.isEmpty else { return 0 }
        let sorted = differences.map(\.value).sorted()
        let middle = sorted.count / 2
        var offset = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        offset = min(max(offset, -limit), limit)
        var within: [Bool] = []
        for _ in 0..<differences.count + 1 {
            let next = differences.map { abs($0.value - offset) < Self.maximumDeviation * $0.sigma }
            guard next != within else { break }
            within = next
            var sum = 0.0
            var weights = 0.0
            for (difference, inside) in zip(differences, within) where inside {
                sum += difference.weight * difference.value
                weights += difference.weight
            }
            guard weights > 0 else { break }
            offset = min(max(sum / weights, -limit), limit)
        }
        return offset
    }

    /// One step of the forward filter to `now`, and the offset's update. Returns the current levels.
    func updatedBelief(_ id: String, _ track: Track, rooms: [String], now: Timestamp) -> (
        belief: Belief, levels: [String: Double]
    ) {
        let model = settings.classifier
        var belief = track.belief
        let step = min(max(0, now - (belief.updated ?? now)), Self.maximumStep)
        belief.updated = max(belief.updated ?? now, now)
        var prior: [String: Double] = [:]
        if Set(belief.probabilities.keys) == Set(rooms) {
            let move = 1 - ElementaryMath.exp(-model.changeRate * step)
            let others = Double(rooms.count - 1)
            for room in rooms {
                let stay = belief.probabilities[room] ?? 0
                prior[room] = stay * (1 - move) + (1 - stay) * move / others
            }
        } else {
            for room in rooms { prior[room] = 1 / Double(rooms.count) }
        }
        let raw = currentLevels(track, now: now)
        if let pinned = pinnedOffsets[id] { belief.offset = pinned }
        let levels = raw.mapValues { $0 - belief.offset }
        let weight = step / model.observationTime
        var logs: [String: Double] = [:]
        for room in rooms {
            let base = ElementaryMath.ln(max(prior[room] ?? 0, 1e-300))
            guard weight > 0, !levels.isEmpty, let fingerprint = fingerprints[room] else {
                logs[room] = base
                continue
            }
            if model.blocking {
                var blocked = belief.blocked[room] ?? [:]
                logs[room] =
                    base
                    + blockingLogLikelihood(levels, under: fingerprint, blocked: &blocked, step: step, weight: weight)
                belief.blocked[room] = blocked
            } else {
                logs[room] = base + weight * logLikelihood(levels, under: fingerprint)
            }
        }
        let top = logs.values.max() ?? 0
        var sum = 0.0
        for (room, value) in logs {
            let p = ElementaryMath.exp(value - top)
            logs[room] = p
            sum += p
        }
        belief.probabilities = logs.mapValues { $0 / max(sum, .leastNormalMagnitude) }
        // The offset: a robust average (median) of level − mean over the gateways heard now that the most likely
        // room's fingerprint has, learned slowly and only from a fairly sure room and two or more gateways.
        if step > 0, pinnedOffsets[id] == nil, let best = mostLikely(belief.probabilities),
            (belief.probabilities[best] ?? 0) >= 0.5,
            let fingerprint = fingerprints[best]
        {
            let residuals = raw.compactMap { gateway, level in fingerprint.levels[gateway].map { level - $0.mean } }
                .sorted()
            if residuals.count >= 2 {
                let middle = residuals.count / 2
                let target =
                    residuals.count % 2 == 1
                    ? residuals[middle] : (residuals[middle - 1] + residuals[middle]) / 2
                let rate = 1 - ElementaryMath.exp(-step / model.offsetTime)
                let offset = belief.offset + rate * (target - belief.offset)
                belief.offset = min(max(offset, -model.offsetLimit), model.offsetLimit)
            }
        }
        return (belief, raw)
    }

    /// The most probable room (ties: the first by name).
    func mostLikely(_ probabilities: [String: Double]) -> String? {
        probabilities.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// The decision by probabilities for a beacon heard within the away timeout (the caller has handled
    /// `not_home`); mirrors the level rule's first decision, `unknown` and change paths.
    mutating func decideByProbability(
        _ id: String, track: inout Track, rooms: [String], now: Timestamp
    ) -> [RoomChange] {
        let model = settings.classifier
        let (belief, levels) = updatedBelief(id, track, rooms: rooms, now: now)
        track.belief = belief
        let probabilities = belief.probabilities
        guard !levels.isEmpty, let best = mostLikely(probabilities) else { return [] }
        // The winning room's loudest gateway heard now (for the change's `gatewayID`).
        func loudest(in room: String) -> String? {
            levels.filter { settings.gatewayRooms[$0.key] == room }.max { ($0.value, $1.key) < ($1.value, $0.key) }?
                .key
        }
        let relit = track.room == .some(Self.unknownRoom) && track.darkRoom == nil
        if relit, awaitsRelitReport(track, now: now) { return [] }
        guard case let .some(.some(current)) = track.room, !relit else {
            guard let heardSince = track.heardSince, now - heardSince >= settings.settleTime else { return [] }
            let hadRoom = track.room != nil
            placeFirst(id, &track, in: best, now: now)
            track.belief.challenger = nil
            return [
                RoomChange(
                    beaconID: id, time: now, from: relit ? Self.unknownRoom : nil, to: best, hadRoom: hadRoom,
                    gatewayID: loudest(in: best))
            ]
        }
        track.updated = now
        // While the beacon's room is dark, the room it is held against is that room (which cannot win: it stays
        // `unknown` until a gateway of it is back).
        let incumbent = track.darkRoom ?? current
        let leads =
            best != incumbent && (probabilities[best] ?? 0) >= model.enterProbability
            && (probabilities[incumbent] ?? 0) < model.exitProbability
        guard leads else {
            track.belief.challenger = nil
            return []
        }
        if track.belief.challenger != best {
            track.belief.challenger = best
            track.belief.challengerSince = now
        }
        guard now - track.belief.challengerSince >= model.dwell else { return [] }
        move(id, &track, to: best, now: now)
        track.belief.challenger = nil
        return [
            RoomChange(beaconID: id, time: now, from: current, to: best, hadRoom: true, gatewayID: loudest(in: best))
        ]
    }
}
