import BeaconModel

/// Decides one room per beacon from the sightings of every gateway (issue 12; docs/rooms.md).
///
/// Per beacon it keeps each gateway's recent evidence: the reported RSSI minus the gateway's receiver offset,
/// as a fast level (smoothed in time, `smoothingTime`) and a slow, robust level (the median over
/// `medianWindow`), with the report rate and the time last heard. A room's level is its best gateway's, less
/// `staleDecay` dB per second once that gateway's evidence is older than `staleAfter`. The current room holds
/// until a challenger wins on one of two paths:
/// - fast: its fast level beats the current room's by `margin` dB *and* stands `rise` dB above its own median
///   (it is getting nearer, as in a walk into its room), continuously for `dwell` seconds;
/// - slow: its median beats the current room's median by `slowMargin` dB continuously for `slowDwell` seconds
///   (a beacon at rest, decided on long averages that outlast body blocking and channel rotation).
/// A beacon heard by no gateway for `awayTimeout` is `not_home`. A beacon last placed in a room none of whose
/// gateways is online (each announced `offline`) is `unknown` (`unknownRoom`), not the neighbour that still hears
/// it: only the fast path moves it while its room is dark (a clear approach to another room's gateway: `margin`
/// dB above that room's highest median since the room went dark, and rising, for `slowDwell`), and once a
/// gateway of that room is back the best room is decided afresh as soon as that room's gateway has reported
/// (Bermuda users' #764). Pure: time comes with every input (capture times, ticks), and every call returns the
/// decisions it made; the caller publishes them.
public struct RoomArbiter: Sendable {
    public private(set) var settings: RoomArbiterSettings

    struct Evidence: Sendable {
        package var fast: Double
        package var samples: [(time: Timestamp, value: Double)] = []
        /// The values of `samples`, kept sorted (inserted and removed by binary search) for the median.
        package var sorted: [Double] = []
        package var median: Double
        package var lastHeard: Timestamp
        package var reportRate: Double

        /// Bounded: at most this many samples per gateway and beacon (the median's window is in time).
        package static let maxSamples = 256

        package mutating func add(_ value: Double, at time: Timestamp, window: Double) {
            samples.append((time, value))
            sorted.insert(value, at: Self.lowerBound(value, in: sorted))
            let cutoff = time - window
            var drop = samples.firstIndex(where: { $0.time > cutoff }) ?? 0
            drop = max(drop, samples.count - Evidence.maxSamples)
            if drop > 0 {
                for old in samples[..<drop] { sorted.remove(at: Self.lowerBound(old.value, in: sorted)) }
                samples.removeFirst(drop)
            }
            let middle = sorted.count / 2
            median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }

        /// The first index whose value is not below `value`.
        package static func lowerBound(_ value: Double, in list: [Double]) -> Int {
            var low = 0
            var high = list.count
            while low < high {
                let middle = (low + high) / 2
                if list[middle] < value { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    package struct Level {
        package var fast: Double
        package var median: Double
        package var rise: Double
        package var gateway: String
    }

    package struct Track: Sendable {
        var evidence: [String: Evidence] = [:]
        /// The decided room: `.some(nil)` is `not_home`; `nil` not decided yet.
        package var room: String?? = nil
        package var since: Timestamp = 0
        package var updated: Timestamp = 0
        package var lastHeard: Timestamp = -.infinity
        /// First evidence since the beacon was last undecided or `not_home` (for `settleTime`).
        var heardSince: Timestamp?
        var fastChallenger: String?
        /// Seconds of dwell the fast challenger has accumulated.
        var fastHeld: Double = 0
        var lastDecided: Timestamp = -.infinity
        var slowChallenger: String?
        var slowSince: Timestamp = 0
        /// The room the beacon was in when all of that room's gateways went offline (its room is `unknown`).
        var darkRoom: String?
        /// While the beacon's room is dark: every other room's highest median since it went dark. The fast path
        /// needs a challenger `margin` dB above its own, held for `slowDwell`: a real approach, not a neighbour
        /// recovering from a body block or a fade (against nothing, as before, that took a tag at rest after
        /// 6-76 s on the simulator's outage scenario).
        var darkReference: [String: Double] = [:]
        /// The room lit again and when: a beacon still `unknown` waits (at most `evidenceMaxAge`) for a report of
        /// that room's gateways before it is decided afresh, so that the neighbour does not win the moments
        /// before the returning gateway's first report.
        var relit: (room: String, at: Timestamp)?
        /// The fingerprint classifier's state (RoomArbiter+Classifier.swift).
        var belief = Belief()

        /// Forgets the dark room and its relighting (the beacon was decided elsewhere, or is away).
        mutating func leaveDarkness() {
            darkRoom = nil
            darkReference = [:]
            relit = nil
        }
    }

    /// The room of a beacon last placed in a room whose gateways are all offline (a room may not be named so).
    public static let unknownRoom = "unknown"
    /// Gateways announced offline (their retained `offline` availability, the broker's will): their evidence
    /// does not count, and a room whose gateways are all offline is dark.
    public private(set) var offlineGateways: Set<String> = []

    /// The site's trained rooms (issue 29, "Training"): set by the caller (the coordinator from the retained
    /// fingerprints, the simulator from its training phase).
    public private(set) var fingerprints = FingerprintBook()

    /// Analysis only (the simulator's ablation rows, docs/rooms.md "Session 28"): per beacon a device offset the
    /// classifier uses as given instead of learning it (the simulator's true one). Empty in a gateway.
    package var pinnedOffsets: [String: Double] = [:]

    package var tracks: [String: Track] = [:]
    var dirty: Set<String> = []

    public init(settings: RoomArbiterSettings) { self.settings = settings }

    /// A new arbiter restoring persisted decisions younger than `restoreMaxAge` at `now`.
    public init(settings: RoomArbiterSettings, restoring rows: [PersistedRoomState], now: Timestamp) {
        self.settings = settings
        restore(rows, now: now)
    }

    /// Adopts persisted (or retained) decisions for beacons this arbiter has no decision about yet. Returns how
    /// many were taken.
    @discardableResult
    public mutating func restore(_ rows: [PersistedRoomState], now: Timestamp) -> Int {
        var taken = 0
        for row in rows where row.since.isFinite && row.updated.isFinite && now - row.updated <= settings.restoreMaxAge
        {
            guard tracks[row.beaconID]?.room == nil else { continue }
            var track = tracks[row.beaconID] ?? Track()
            track.room = .some(row.room)
            track.since = row.since
            track.updated = row.updated
            // A restored room counts as heard at its last confirmation, so the away timeout runs from there.
            if row.room != nil { track.lastHeard = max(track.lastHeard, row.updated) }
            tracks[row.beaconID] = track
            taken += 1
        }
        return taken
    }

    /// Adopts a decision announced by another arbiter (the leader's), replacing this one's own: from then on
    /// this arbiter's evidence must beat the adopted room by the usual margin, sustained for the dwell, before
    /// it decides otherwise (a silent gateway follows the leader, so a takeover neither repeats an older view
    /// nor undoes a move the leader announced seconds before). Evidence is kept; dwell progress starts again.
    /// Ignored when older than `restoreMaxAge` at `now`, or not finite.
    public mutating func adopt(_ row: PersistedRoomState, now: Timestamp) {
        guard row.since.isFinite, row.updated.isFinite, now - row.updated <= settings.restoreMaxAge else { return }
        var track = tracks[row.beaconID] ?? Track()
        guard track.room != .some(row.room) else { return }
        track.room = .some(row.room)
        track.since = row.since
        track.updated = row.updated
        track.fastChallenger = nil
        track.fastHeld = 0
        track.slowChallenger = nil
        track.belief.challenger = nil
        if row.room != nil {
            track.lastHeard = max(track.lastHeard, row.updated)
        } else {
            // `not_home`: a room again only from evidence heard after this (and `settleTime` of it).
            track.heardSince = nil
        }
        tracks[row.beaconID] = track
    }

    /// New parameters (a configuration reload): evidence, decisions and dwell progress are kept; evidence of
    /// gateways without a room any more stops counting, and a gateway's evidence counts for its new room.
    public mutating func reconfigure(_ settings: RoomArbiterSettings) { self.settings = settings }

    /// New fingerprints (a walk recorded, a retained one read, a room forgotten): evidence and decisions are kept.
    public mutating func setFingerprints(_ book: FingerprintBook) { fingerprints = book }

    /// The gateways announced offline now (`offline` availability; an `online` one takes a gateway out). Beacons
    /// in a room that turns dark become `unknown`; those of a room that is lit again are decided afresh at their
    /// next decision (a sighting or the tick).
    /// A beacon whose own evidence already put another room `slowMargin` dB ahead of its room (by median, the
    /// room's last evidence included) is left to the usual rules instead: the other room takes it on the slow path.
    public mutating func setOffline(_ gateways: Set<String>, now: Timestamp) -> [RoomChange] {
        guard gateways != offlineGateways else { return [] }
        let before = self
        offlineGateways = gateways
        let dark = Self.darkRooms(gatewayRooms: settings.gatewayRooms, offline: gateways)
        var changes: [RoomChange] = []
        for id in tracks.keys.sorted() {
            guard var track = tracks[id] else { continue }
            if case let .some(.some(room)) = track.room, room != Self.unknownRoom, dark.contains(room),
                !before.evidenceContradicts(room, in: track, now: now)
            {
                track.room = .some(Self.unknownRoom)
                track.darkRoom = room
                track.darkReference = before.levels(track, now: now).mapValues(\.median)
                track.relit = nil
                track.since = now
                track.updated = now
                track.fastChallenger = nil
                track.fastHeld = 0
                track.slowChallenger = nil
                track.belief.challenger = nil
                dirty.insert(id)
                changes.append(RoomChange(beaconID: id, time: now, from: room, to: Self.unknownRoom, hadRoom: true))
            } else if let room = track.darkRoom, !dark.contains(room) {
                track.darkRoom = nil
                track.darkReference = [:]
                track.relit = (room, now)
            }
            tracks[id] = track
        }
        return changes
    }

    /// The rooms none of whose gateways (`gatewayRooms`: gateway to room) is online: dark.
    public static func darkRooms(gatewayRooms: [String: String], offline: Set<String>) -> Set<String> {
        var lit: [String: Bool] = [:]
        for (gateway, room) in gatewayRooms {
            lit[room, default: false] = lit[room, default: false] || !offline.contains(gateway)
        }
        return Set(lit.filter { !$0.value }.keys)
    }

    /// Whether another room's median is `slowMargin` dB or more ahead of `room`'s (which has evidence).
    func evidenceContradicts(_ room: String, in track: Track, now: Timestamp) -> Bool {
        let levels = levels(track, now: now)
        guard let own = levels[room]?.median else { return false }
        return levels.contains { $0.key != room && $0.value.median - own >= settings.slowMargin }
    }

    /// The decided room: `.some(nil)` for `not_home`, nil before the first decision.
    public func room(of beaconID: String) -> String?? { tracks[beaconID]?.room }

    /// Every beacon's current decision, for persisting and for a leader's snapshot.
    public func states() -> [PersistedRoomState] {
        tracks.compactMap { id, track in
            guard let room = track.room else { return nil }
            return PersistedRoomState(beaconID: id, room: room, since: track.since, updated: track.updated)
        }.sorted { $0.beaconID < $1.beaconID }
    }

    /// Decisions that changed since the last call, for the state store.
    public mutating func takeStateChanges() -> [PersistedRoomState] {
        let ids = dirty.sorted()
        dirty.removeAll()
        return ids.compactMap { id in
            guard let track = tracks[id], let room = track.room else { return nil }
            return PersistedRoomState(beaconID: id, room: room, since: track.since, updated: track.updated)
        }
    }

    /// One gateway's sighting. Sightings of gateways without a room, or without a finite RSSI, are ignored, as
    /// are sightings older than the gateway's last one (out of order).
    public mutating func process(_ sighting: RoomSighting) -> [RoomChange] {
        guard settings.gatewayRooms[sighting.gatewayID] != nil, sighting.time.isFinite else { return [] }
        let reported = settings.useRawRSSI ? (sighting.rawRSSI ?? sighting.rssi) : sighting.rssi
        guard reported.isFinite else { return [] }
        let signal = reported - (settings.receiverOffsets[sighting.gatewayID] ?? 0)
        var track = tracks[sighting.beaconID] ?? Track()
        if var evidence = track.evidence[sighting.gatewayID] {
            guard sighting.time >= evidence.lastHeard else { return [] }
            let elapsed = sighting.time - evidence.lastHeard
            let weight = settings.smoothingTime > 0 ? 1 - ElementaryMath.exp(-elapsed / settings.smoothingTime) : 1
            evidence.fast += weight * (signal - evidence.fast)
            evidence.add(signal, at: sighting.time, window: settings.medianWindow)
            evidence.lastHeard = sighting.time
            evidence.reportRate = sighting.reportRate
            track.evidence[sighting.gatewayID] = evidence
        } else {
            var evidence = Evidence(
                fast: signal, median: signal, lastHeard: sighting.time, reportRate: sighting.reportRate)
            evidence.add(signal, at: sighting.time, window: settings.medianWindow)
            track.evidence[sighting.gatewayID] = evidence
        }
        track.lastHeard = max(track.lastHeard, sighting.time)
        if track.heardSince == nil { track.heardSince = sighting.time }
        tracks[sighting.beaconID] = track
        return decide(sighting.beaconID, now: sighting.time)
    }

    /// Time passes (the caller's tick, at least once a second): dwell times complete, stale evidence ages, away
    /// timeouts expire.
    public mutating func advance(to now: Timestamp) -> [RoomChange] {
        guard now.isFinite else { return [] }
        var changes: [RoomChange] = []
        for id in tracks.keys.sorted() { changes += decide(id, now: now) }
        return changes
    }

    /// Whether an `unknown` beacon whose room is lit again still waits for that room's first report (at most
    /// `evidenceMaxAge` after the return), so that the neighbours' evidence alone does not decide it.
    func awaitsRelitReport(_ track: Track, now: Timestamp) -> Bool {
        guard let back = track.relit, now - back.at < settings.evidenceMaxAge else { return false }
        return !track.evidence.contains { settings.gatewayRooms[$0.key] == back.room && $0.value.lastHeard >= back.at }
    }

    /// A gateway's room and levels at `now` (its fast level and median less the stale decay), or nil when its
    /// evidence says nothing: the gateway offline or in no room, or not heard within `evidenceMaxAge`. The level
    /// rule (`levels`) and the fingerprint margin rule (`gatewayLevels`) read evidence through it.
    func currentLevels(
        of gateway: String, _ evidence: Evidence, now: Timestamp
    ) -> (room: String, fast: Double, median: Double)? {
        guard !offlineGateways.contains(gateway), let room = settings.gatewayRooms[gateway] else { return nil }
        let age = now - evidence.lastHeard
        guard age <= settings.evidenceMaxAge else { return nil }
        let penalty = max(0, age - settings.staleAfter) * settings.staleDecay
        return (room, evidence.fast - penalty, evidence.median - penalty)
    }

    /// Every room's level from fresh evidence at `now` (its best gateway by fast level).
    package func levels(_ track: Track, now: Timestamp) -> [String: Level] {
        var result: [String: Level] = [:]
        for (gateway, evidence) in track.evidence {
            guard let current = currentLevels(of: gateway, evidence, now: now) else { continue }
            let room = current.room
            let level = Level(
                fast: current.fast, median: current.median, rise: evidence.fast - evidence.median, gateway: gateway)
            if let best = result[room], best.fast > level.fast || (best.fast == level.fast && best.gateway < gateway) {
                continue
            }
            result[room] = level
        }
        return result
    }

    /// A beacon's first room (a first decision, or back from not_home or `unknown`): what the level rule, the
    /// classifier and the fingerprint margin rule share; each clears its own challengers.
    mutating func placeFirst(_ id: String, _ track: inout Track, in room: String, now: Timestamp) {
        track.relit = nil
        track.room = .some(room)
        track.since = now
        track.updated = now
        dirty.insert(id)
    }

    /// A move to `room` (the level rule, the classifier and the fingerprint margin rule): the level paths'
    /// challengers and the dark room cleared (the classifier clears its own challenger).
    mutating func move(_ id: String, _ track: inout Track, to room: String, now: Timestamp) {
        track.room = .some(room)
        track.since = now
        track.updated = now
        track.fastChallenger = nil
        track.fastHeld = 0
        track.slowChallenger = nil
        track.leaveDarkness()
        dirty.insert(id)
    }

    private mutating func decide(_ id: String, now: Timestamp) -> [RoomChange] {
        guard var track = tracks[id] else { return [] }
        defer { tracks[id] = track }
        track.evidence = track.evidence.filter { now - $0.value.lastHeard <= settings.evidenceMaxAge }
        guard now - track.lastHeard < settings.awayTimeout else {
            track.heardSince = nil
            track.fastChallenger = nil
            track.slowChallenger = nil
            track.leaveDarkness()
            guard case let .some(.some(former)) = track.room else { return [] }
            track.room = .some(nil)
            track.since = now
            track.updated = now
            dirty.insert(id)
            return [RoomChange(beaconID: id, time: now, from: former, to: nil, hadRoom: true)]
        }
        // Every room trained: the fingerprint classifier decides (RoomArbiter+Classifier.swift).
        // (Or, with the classifier off and `fingerprint_rule` on, the fingerprint margin rule:
        // RoomArbiter+FingerprintRule.swift.)
        if let rooms = classifiedRooms {
            if settings.classifier.enabled { return decideByProbability(id, track: &track, rooms: rooms, now: now) }
            return decideByFingerprintRule(id, track: &track, rooms: rooms, now: now)
        }
        let levels = levels(track, now: now)
        if track.darkRoom != nil {
            for (room, level) in levels {
                track.darkReference[room] = max(track.darkReference[room] ?? level.median, level.median)
            }
        }
        guard let best = levels.max(by: { ($0.value.fast, $1.key) < ($1.value.fast, $0.key) }) else { return [] }
        // `unknown` whose room is lit again is decided afresh, like a first decision, once that room's gateway
        // has reported since (or after `evidenceMaxAge` without it: the beacon left meanwhile).
        let relit = track.room == .some(Self.unknownRoom) && track.darkRoom == nil
        if relit, awaitsRelitReport(track, now: now) { return [] }
        guard case let .some(.some(current)) = track.room, !relit else {
            // First decision, back from not_home, or back from unknown: the best room once evidence had
            // `settleTime`.
            guard let heardSince = track.heardSince, now - heardSince >= settings.settleTime else { return [] }
            let hadRoom = track.room != nil
            let former = relit ? Self.unknownRoom : nil
            placeFirst(id, &track, in: best.key, now: now)
            track.fastChallenger = nil
            track.slowChallenger = nil
            return [
                RoomChange(
                    beaconID: id, time: now, from: former, to: best.key, hadRoom: hadRoom,
                    gatewayID: best.value.gateway)
            ]
        }
        if levels[current] != nil { track.updated = now }
        let incumbent = levels[current]
        // Fast path: the loudest room, far enough ahead and rising. Time meeting both conditions counts up, time
        // failing them counts down (a single faded report does not restart the dwell), from 0 to `dwell`.
        var winner: (room: String, level: Level)?
        let elapsed = max(0, min(now - track.lastDecided, 1))
        track.lastDecided = now
        if best.key != current {
            if track.fastChallenger != best.key {
                track.fastChallenger = best.key
                track.fastHeld = 0
            }
            // While the beacon's room is dark its gateways say nothing: the challenger is measured against its own
            // highest median since, for the slow dwell.
            let dark = track.darkRoom != nil
            let baseline = dark ? track.darkReference[best.key] : incumbent?.fast
            let ahead =
                best.value.fast - (baseline ?? -.infinity) >= settings.margin && best.value.rise >= settings.rise
            track.fastHeld = max(0, track.fastHeld + (ahead ? elapsed : -elapsed))
            if ahead, track.fastHeld >= (dark ? settings.slowDwell : settings.dwell) { winner = (best.key, best.value) }
        } else {
            track.fastChallenger = nil
            track.fastHeld = 0
        }
        // Slow path: the room with the highest median, ahead of the current room's median and not behind it now.
        // (Not while the beacon's own room is dark: a neighbour's steady level says nothing about a move.)
        if track.darkRoom == nil,
            let slowBest = levels.max(by: { ($0.value.median, $1.key) < ($1.value.median, $0.key) }),
            slowBest.key != current,
            slowBest.value.median - (incumbent?.median ?? -.infinity) >= settings.slowMargin,
            slowBest.value.fast >= (incumbent?.fast ?? -.infinity)
        {
            if track.slowChallenger != slowBest.key {
                track.slowChallenger = slowBest.key
                track.slowSince = now
            }
            if winner == nil, now - track.slowSince >= settings.slowDwell { winner = (slowBest.key, slowBest.value) }
        } else {
            track.slowChallenger = nil
        }
        guard let winner else { return [] }
        let lead = incumbent.map { winner.level.fast - $0.fast }
        move(id, &track, to: winner.room, now: now)
        return [
            RoomChange(
                beaconID: id, time: now, from: current, to: winner.room, hadRoom: true, lead: lead,
                gatewayID: winner.level.gateway)
        ]
    }
}
