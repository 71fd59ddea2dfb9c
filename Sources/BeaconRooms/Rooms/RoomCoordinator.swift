import BeaconModel

/// The room arbiter as it runs inside a gateway (docs/rooms.md, "Where it runs"): every gateway with
/// `rooms.enabled` feeds the arbiter with its own sightings (from its engine) and every other gateway's (from
/// the broker, its own echo dropped), and keeps what the broker says was announced (the retained room states).
/// Only the leader, the lowest online gateway id of the site, publishes decisions; the others decide silently,
/// so a takeover starts with warm evidence, and adopt every decision the leader announces (their own evidence
/// must then beat it by the margin, sustained for the dwell, as the leader's would). A gateway that becomes
/// leader first restores the announced states for beacons it has no decision about, then announces wherever
/// its own decision differs from the announced one, continuing each beacon's decision numbers.
///
/// Pure: capture times come with the sightings and `advance(to:wall:)`, the wall (monotonic) clock only with
/// the calls that need it (leader settling); every call returns what the caller must do.
public struct RoomCoordinator: Sendable {
    public enum Effect: Sendable, Equatable {
        /// Encode and publish these decisions (this gateway leads).
        case publish([RoomEvent])
        /// Publish these room states again as a snapshot (retained, not stored in the outbox): a leader back
        /// after losing the broker, whose retained states may be gone (a broker restart without persistence).
        /// Same decision numbers; `from` is not known then (null).
        case republish([RoomEvent])
        /// Leadership changed: whether this gateway now leads, and who leads as far as it knows.
        case leadership(isLeader: Bool, leader: String?)
        /// Publish this calibration (JSON, `SiteCalibration.payload`) retained on `topics.calibration` (this
        /// gateway leads and has solved).
        case calibration(String)
        /// Publish these beacons' room probabilities (the fingerprint classifier decides; this gateway leads),
        /// retained at QoS 0 on `topics.probabilities(beaconID:)`.
        case probabilities([RoomProbabilities])
        /// Training (issue 29, `RoomCoordinator+Training`): publish this room's fingerprint
        /// (`FingerprintBook.payload`) retained on `topics.fingerprint(room:)`; an empty payload removes it.
        case fingerprint(room: String, payload: String)
        /// Training: answer a rooms command on `<prefix>/<gateway>/reply/rooms/<verb>` (not retained).
        case reply(verb: String, payload: String)
    }

    public struct Counters: Sendable, Equatable {
        public var ownSightings = 0
        public var peerSightings = 0
        /// Our own sightings echoed by the broker (dropped: already fed from the engine).
        public var echoesDropped = 0
        /// Other gateways' "gone" sightings (RSSI null: they no longer hear the beacon; their evidence ages out).
        public var peerGone = 0
        /// Inbound messages that were not what their topic promised (ignored).
        public var malformed = 0
        /// New beacons ignored because `maxBeacons` are tracked.
        public var beaconsRefused = 0
        public var published = 0
        /// Decisions of this gateway's arbiter (leading or not): every room change, first rooms and `not_home`
        /// included...
        public var decisions = 0
        /// ...of which switches from one room to another.
        public var switches = 0
        /// Sightings of the site's identity beacons (self-calibration; never room evidence).
        public var identitySightings = 0
        /// Calibrations solved, and applied to the arbiter's offsets.
        public var calibrationSolves = 0
        /// Published calibrations read from the broker (restored offsets).
        public var calibrationsRestored = 0
        /// Training (issue 29): walks recorded here, and fingerprints read from the broker (set or removed).
        public var trainings = 0
        public var fingerprintsRead = 0
        public init() {}
    }

    public let gatewayID: String
    public let topics: RoomTopics
    public internal(set) var arbiter: RoomArbiter
    public private(set) var isLeader = false
    public private(set) var announced: [String: AnnouncedRoom] = [:]
    public internal(set) var counters = Counters()
    /// Self-calibration (nil: off), and the arbiter's settings before its offsets are applied.
    public private(set) var calibration: SiteCalibration?
    /// The room probabilities last published per beacon (leader, fingerprint classifier).
    var publishedProbabilities: [String: RoomProbabilities] = [:]
    /// The declared reference tags' check of the decisions (`rooms.reference_tags`), ticked with `advance`.
    public private(set) var references = RoomReferenceCheck(tags: [:])
    var baseSettings: RoomArbiterSettings
    package var leaderSettle: Double
    package var candidates: Set<String>
    package var online: Set<String> = []
    /// Gateways whose availability says `offline` (kept across this gateway's reconnects: the retained
    /// availability that comes again replaces it).
    package var offline: Set<String> = []
    package var connected = false
    /// Connections so far, counted by this gateway's own `online` coming back, one per connection (a takeover
    /// after the first one republishes the announced states).
    package var connections = 0
    /// Wall time this gateway's own `online` came back from the broker (nil: not yet on this connection).
    var ownOnlineSince: Double?
    /// The newest capture time seen.
    package var clock: Timestamp = -.infinity
    /// The training walk running on this gateway (`RoomCoordinator+Training`), with its command's id.
    package var training: (id: String?, recorder: FingerprintRecorder)?
    /// Retained fingerprints refused by this site's rooms or gateways, by topic level (at most
    /// `FingerprintBook.maximumRooms`, each at most 64 KiB): read again after a reload (`placeHeldFingerprints`).
    var unplaced: [String: [UInt8]] = [:]

    /// Beacons tracked at most (a flood of invented ids on the broker cannot grow the state without bound).
    public static let maxBeacons = 4096

    public init(
        gatewayID: String, topics: RoomTopics, settings: RoomArbiterSettings, leaderSettle: Double,
        calibration: CalibrationSettings? = nil
    ) {
        self.gatewayID = gatewayID
        self.topics = topics
        self.arbiter = RoomArbiter(settings: settings)
        self.baseSettings = settings
        self.leaderSettle = leaderSettle
        self.candidates = Set(settings.gatewayRooms.keys).union([gatewayID])
        self.calibration = calibration.map { SiteCalibration(settings: $0, gateways: candidates) }
    }

    /// The lowest online gateway of the site, as far as this gateway knows (itself only once its own `online`
    /// has come back).
    public var leader: String? {
        var known = online.intersection(candidates)
        known.remove(gatewayID)
        if ownOnlineSince != nil { known.insert(gatewayID) }
        return known.min()
    }

    /// The broker connection came up or went down. Down: this gateway stops leading at once (its events would
    /// wait in the outbox) and forgets who is online (the retained availability comes again on resubscribing).
    /// `number` is the publisher's count of connections made when it read the state: a down read about a
    /// connection older than the last one whose `online` came back is stale (the caller's view of the connection
    /// can lag behind the messages it delivers) and ignored. Own `online` messages also count as up.
    public mutating func connection(_ up: Bool, number: Int? = nil, wall: Double) -> [Effect] {
        if up {
            connected = true
            return []
        }
        if let number, number < connections { return [] }
        connected = false
        online.removeAll()
        ownOnlineSince = nil
        return updateLeadership(wall: wall)
    }

    /// This gateway's own sighting, from its engine.
    public mutating func ownSighting(_ sighting: RoomSighting) -> [Effect] {
        counters.ownSightings += 1
        return feed(sighting)
    }

    /// A message on one of `topics`' filters.
    public mutating func receive(_ message: InboundMessage, wall: Double) -> [Effect] {
        switch topics.parse(message.topic) {
        case let .availability(gateway):
            let state = String(decoding: message.payload.prefix(16), as: UTF8.self)
            var effects: [Effect] = []
            if gateway == gatewayID {
                // Our own birth coming back means every retained availability before it has arrived too, and that
                // we are connected (whatever the caller saw of the connection yet). One per connection: a second
                // one is a connection whose loss the caller did not see (a broker restarted within a second), so
                // a leader settles and takes over again, publishing the states again.
                if state == "online" {
                    connections += 1
                    connected = true
                    if ownOnlineSince != nil, isLeader {
                        isLeader = false
                        effects.append(.leadership(isLeader: false, leader: leader))
                    }
                    ownOnlineSince = wall
                }
            } else if state == "online" {
                online.insert(gateway)
                offline.remove(gateway)
            } else {
                online.remove(gateway)
                if state == "offline" { offline.insert(gateway) }
            }
            return effects + updateLeadership(wall: wall) + darken(wall: wall)
        case let .sighting(gateway):
            if gateway == gatewayID {
                counters.echoesDropped += 1
                return []
            }
            switch RoomSighting.inbound(gatewayID: gateway, payload: message.payload) {
            case let .sighting(sighting):
                counters.peerSightings += 1
                return feed(sighting)
            case .gone:
                counters.peerGone += 1
                return []
            case .malformed:
                counters.malformed += 1
                return []
            }
        case .state:
            guard let state = AnnouncedRoom(payload: message.payload) else {
                counters.malformed += 1
                return []
            }
            note(state)
            return []
        case .calibration:
            guard calibration?.restore(payload: message.payload) == true else {
                counters.malformed += 1
                return []
            }
            counters.calibrationsRestored += 1
            applyOffsets()
            return []
        case let .fingerprint(roomLevel):
            return readFingerprint(roomLevel: roomLevel, payload: message.payload)
        case nil:
            return []
        }
    }

    /// Time passes (the daemon's tick): dwell times complete, away timeouts expire, a settled gateway may lead.
    public mutating func advance(to now: Timestamp, wall: Double) -> [Effect] {
        var effects = updateLeadership(wall: wall)
        guard now.isFinite else { return effects }
        clock = max(clock, now)
        effects += finishTraining(at: now)
        let changes = arbiter.advance(to: now)
        count(changes)
        if isLeader, !changes.isEmpty { effects += announce(changes) }
        if !references.tags.isEmpty {
            let decided = arbiter
            references.observe(now: now) { decided.room(of: $0) }
        }
        if isLeader { effects += dueProbabilities(at: now) }
        if let solution = calibration?.solveIfDue(at: now) {
            counters.calibrationSolves += 1
            applyOffsets()
            // Only a solve with pairs is worth publishing: an empty one would overwrite the retained calibration
            // a restarted leader has just restored.
            if isLeader, solution.pairs > 0 {
                effects.append(.calibration(SiteCalibration.payload(solution, leader: gatewayID)))
            }
        }
        return effects
    }

    /// The arbiter's receive offsets from the hand-typed ones and the calibration (`SiteCalibration`).
    private mutating func applyOffsets() {
        guard let calibration else { return }
        var settings = baseSettings
        settings.receiverOffsets = calibration.receiverOffsets(hand: baseSettings.receiverOffsets)
        if settings != arbiter.settings { arbiter.reconfigure(settings) }
    }

    private mutating func feed(_ sighting: RoomSighting) -> [Effect] {
        if calibration?.take(sighting) == true {
            counters.identitySightings += 1
            return []
        }
        recordTraining(sighting)
        guard arbiter.tracks[sighting.beaconID] != nil || arbiter.tracks.count < RoomCoordinator.maxBeacons else {
            counters.beaconsRefused += 1
            return []
        }
        if sighting.time.isFinite { clock = max(clock, sighting.time) }
        let changes = arbiter.process(sighting)
        count(changes)
        guard isLeader, !changes.isEmpty else { return [] }
        return announce(changes)
    }

    /// A reload of the `rooms:` section: the arbiter's new parameters and gateways (evidence and decisions
    /// kept), the new leader settle time, and leadership again over the new list of gateways.
    public mutating func reconfigure(settings: RoomArbiterSettings, leaderSettle: Double, wall: Double) -> [Effect] {
        arbiter.reconfigure(settings)
        baseSettings = settings
        self.leaderSettle = leaderSettle
        candidates = Set(settings.gatewayRooms.keys).union([gatewayID])
        calibration?.setGateways(candidates)
        applyOffsets()
        placeHeldFingerprints()
        return updateLeadership(wall: wall)
    }

    /// The beacons whose probabilities are due (`RoomProbabilities.interval` since their last, and changed), while
    /// the classifier decides. Bounded by the beacons tracked.
    private mutating func dueProbabilities(at now: Timestamp) -> [Effect] {
        guard arbiter.decidesByFingerprints else {
            publishedProbabilities.removeAll()
            return []
        }
        var due: [RoomProbabilities] = []
        for id in arbiter.tracks.keys.sorted() {
            let probabilities = arbiter.probabilities(of: id)
            guard !probabilities.isEmpty else { continue }
            let room: String? =
                switch arbiter.room(of: id) {
                case let .some(.some(name)): name
                case .some(.none): RoomEvent.notHome
                case .none: nil
                }
            let snapshot = RoomProbabilities(
                beaconID: id, time: now, room: room, probabilities: probabilities,
                deviceOffset: arbiter.deviceOffset(of: id))
            if let last = publishedProbabilities[id],
                now - last.time < RoomProbabilities.interval || !snapshot.differs(from: last)
            {
                continue
            }
            publishedProbabilities[id] = snapshot
            due.append(snapshot)
        }
        publishedProbabilities = publishedProbabilities.filter { arbiter.tracks[$0.key] != nil }
        return due.isEmpty ? [] : [.probabilities(due)]
    }

    /// New reference tags (start, reload); the tallies start again.
    public mutating func setReferenceTags(_ tags: [String: String]) {
        guard tags != references.tags else { return }
        references = RoomReferenceCheck(tags: tags)
    }

    /// The reference tags that turned wrong or right again since the last call (for the log).
    public mutating func takeReferenceNotices() -> [RoomReferenceCheck.Notice] { references.takeNotices() }

    /// Beacons the arbiter keeps evidence or a decision for.
    public var trackedBeacons: Int { arbiter.tracks.count }

    /// Rooms whose gateways are all offline turn their beacons `unknown` (`RoomArbiter.setOffline`), announced
    /// by the leader; a room lit again is decided afresh at the next tick or sighting.
    private mutating func darken(wall: Double) -> [Effect] {
        let changes = arbiter.setOffline(offline.intersection(candidates), now: clock.isFinite ? clock : wall)
        count(changes)
        guard isLeader, !changes.isEmpty else { return [] }
        return announce(changes)
    }

    private mutating func count(_ changes: [RoomChange]) {
        counters.decisions += changes.count
        counters.switches += changes.count { $0.hadRoom && $0.from != nil && $0.to != nil }
    }

    /// An announced state (retained, or a leader's new one, our own echo included): the newest decision wins.
    /// A beacon this gateway has not decided about yet restores it, so it is not announced again as new; a
    /// beacon it has decided about silently adopts another gateway's newer decision (`RoomArbiter.adopt`), so
    /// at a takeover it announces only what its own evidence has since contradicted with the sustained margin.
    private mutating func note(_ state: AnnouncedRoom) {
        if let known = announced[state.beaconID] {
            guard state.decision > known.decision || (state.decision == known.decision && state.time >= known.time)
            else { return }
        } else if announced.count >= RoomCoordinator.maxBeacons {
            counters.beaconsRefused += 1
            return
        }
        announced[state.beaconID] = state
        if arbiter.room(of: state.beaconID) == nil {
            arbiter.restore([state.persisted], now: max(clock, state.time))
        } else if state.leader != gatewayID {
            // Another gateway's newer decision: follow it rather than keep a view of our own it did not share.
            arbiter.adopt(state.persisted, now: max(clock, state.time))
        }
    }

    private mutating func updateLeadership(wall: Double) -> [Effect] {
        let leads: Bool
        if connected, let since = ownOnlineSince, leader == gatewayID {
            leads = wall - since >= leaderSettle
        } else {
            leads = false
        }
        guard leads != isLeader else { return [] }
        isLeader = leads
        var effects: [Effect] = [.leadership(isLeader: leads, leader: leader)]
        if leads { effects += takeOver() }
        return effects
    }

    /// Becoming leader: adopt what was announced for beacons without a decision here, then announce every
    /// decision that differs from the announced one.
    private mutating func takeOver() -> [Effect] {
        arbiter.restore(
            announced.values.sorted { $0.beaconID < $1.beaconID }.map(\.persisted),
            now: clock.isFinite ? clock : 0)
        var effects: [Effect] = []
        if connections > 1 {
            let again = announced.values.sorted { $0.beaconID < $1.beaconID }.map { state in
                RoomEvent(
                    beaconID: state.beaconID, time: state.time, room: state.room, from: nil, hadRoom: false,
                    since: state.since, decision: state.decision)
            }
            if !again.isEmpty { effects.append(.republish(again)) }
        }
        var events: [RoomEvent] = []
        for state in arbiter.states() {
            let known = announced[state.beaconID]
            if let known, known.room == state.room { continue }
            events.append(
                event(
                    beaconID: state.beaconID, room: state.room,
                    time: max(state.updated, clock.isFinite ? clock : state.updated),
                    since: state.since, gatewayID: nil, lead: nil))
        }
        return events.isEmpty ? effects : effects + [.publish(events)]
    }

    private mutating func announce(_ changes: [RoomChange]) -> [Effect] {
        var events: [RoomEvent] = []
        for change in changes {
            if let known = announced[change.beaconID], known.room == change.to { continue }
            events.append(
                event(
                    beaconID: change.beaconID, room: change.to, time: change.time, since: change.time,
                    gatewayID: change.gatewayID, lead: change.lead))
        }
        return events.isEmpty ? [] : [.publish(events)]
    }

    /// The next decision for a beacon, numbered after the announced one, and noted as announced.
    private mutating func event(
        beaconID: String, room: String?, time: Timestamp, since: Timestamp, gatewayID winner: String?,
        lead: Double?
    ) -> RoomEvent {
        let known = announced[beaconID]
        let event = RoomEvent(
            beaconID: beaconID, time: time, room: room, from: known?.room, hadRoom: known != nil,
            since: since, decision: (known?.decision ?? 0) + 1, gatewayID: winner, lead: lead)
        announced[beaconID] = AnnouncedRoom(
            beaconID: beaconID, room: room, since: since, time: time,
            decision: event.decision, leader: gatewayID)
        counters.published += 1
        return event
    }
}
