import BeaconConfig
import BeaconEvents
import BeaconFormats
import BeaconModel
import BeaconRooms
import BeaconRuntime
import HCIScanner
import MQTTPublisher
import Synchronization

/// Inbound messages for the room arbiter, handed from the subscription tasks to the daemon loop (which owns the
/// coordinator). Bounded: beyond `capacity` waiting messages the oldest are dropped and counted. It also keeps
/// which gateways are online, for `rooms.replay_wait_for_gateways` before the loop runs.
final class RoomInbox: Sendable {
    static let capacity = 20_000
    private let state = Mutex<(messages: [InboundMessage], dropped: Int, online: Set<String>)>(([], 0, []))
    let topics: RoomTopics

    init(topics: RoomTopics) { self.topics = topics }

    /// Adds a message; true when the inbox was empty (the caller then wakes the loop).
    func add(_ message: InboundMessage) -> Bool {
        let availability: (gateway: String, online: Bool)?
        if case let .availability(gateway) = topics.parse(message.topic) {
            availability = (gateway, message.payload.elementsEqual("online".utf8))
        } else {
            availability = nil
        }
        return state.withLock { state in
            if let availability {
                if availability.online {
                    state.online.insert(availability.gateway)
                } else {
                    state.online.remove(availability.gateway)
                }
            }
            if state.messages.count >= RoomInbox.capacity {
                state.messages.removeFirst(state.messages.count - RoomInbox.capacity + 1)
                state.dropped += 1
            }
            state.messages.append(message)
            return state.messages.count == 1
        }
    }

    func takeAll() -> [InboundMessage] {
        state.withLock { state in
            defer { state.messages.removeAll(keepingCapacity: true) }
            return state.messages
        }
    }

    var dropped: Int { state.withLock { $0.dropped } }

    func onlineCount(among gateways: Set<String>) -> Int { state.withLock { $0.online.intersection(gateways).count } }
}

/// The room arbiter inside the daemon (`rooms.enabled`): the pure coordinator, the inbox of inbound messages,
/// and whether the publisher was connected at the last look.
struct DaemonRooms {
    var coordinator: RoomCoordinator
    let inbox: RoomInbox
    var gateways: Set<String>
    var connected = false
    /// Capture time of the last `advance` (at most one per second of capture time between ticks).
    var lastAdvance: Timestamp = -.infinity

    init?(configuration: GatewayConfiguration) {
        let settings = configuration.rooms
        guard settings.enabled else { return nil }
        // In a zone: the zone's topics, gateways and rooms only (docs/rooms.md, "Large sites").
        let topics = settings.topics(prefix: configuration.topics.prefix, own: configuration.gateway)
        let arbiter = settings.arbiterSettings(own: configuration.gateway)
        coordinator = RoomCoordinator(
            gatewayID: configuration.gateway.id, topics: topics, settings: arbiter,
            leaderSettle: settings.leaderSettle, calibration: settings.calibration)
        inbox = RoomInbox(topics: topics)
        gateways = Set(arbiter.gatewayRooms.keys)
        coordinator.setReferenceTags(Self.referenceTags(settings, arbiter: arbiter))
    }

    /// The reference tags this gateway checks: those declared in a room of its zone (all without zones).
    static func referenceTags(_ settings: RoomSettings, arbiter: RoomArbiterSettings) -> [String: String] {
        let rooms = Set(arbiter.gatewayRooms.values).union(arbiter.roomsWithoutGateway)
        return settings.referenceTags.filter { rooms.contains($0.value) }
    }
}

extension Daemon {
    /// Subscribes the room arbiter's topics; a service (nil when rooms are off) forwards each subscription's
    /// messages to the inbox and wakes the loop with a `.rooms` control when the inbox was empty.
    func roomSubscriptionService() -> TaskService? {
        guard let rooms else { return nil }
        let topics = rooms.coordinator.topics
        // The retained fingerprints and this gateway's rooms commands (training, Daemon+RoomTraining) go through
        // the same inbox, so the loop sees them in order with the evidence.
        // In a zone the availability and sightings are subscribed gateway by gateway (the zone's only).
        let streams =
            (topics.availabilityFilters + [topics.stateFilter] + topics.sightingFilters + [
                topics.fingerprintFilter, encoder.layout.roomsCommandBase + "/+",
            ]).map { publisher.subscribe($0, qos: 1) }
        return TaskService("rooms") { [inbox = rooms.inbox, mailbox] in
            await withTaskGroup(of: Void.self) { group in
                for stream in streams {
                    group.addTask { for await message in stream where inbox.add(message) { _ = mailbox.post(.rooms) } }
                }
            }
        }
    }

    /// Replay with `rooms.replay_wait_for_gateways`: waits (at most 60 s) until that many of the site's gateways
    /// are online, so several gateways' replays run side by side.
    func waitForRoomGateways() async {
        guard let rooms, isReplay, configuration.rooms.replayWaitForGateways > 0 else { return }
        let wanted = configuration.rooms.replayWaitForGateways
        logger.notice("waiting for gateways before replaying", metadata: ["gateways": "\(wanted)"])
        let deadline = SystemClock.monotonic() + 60
        while rooms.inbox.onlineCount(among: rooms.gateways) < wanted, SystemClock.monotonic() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The clock the coordinator's leader settle runs on: the wall (monotonic) clock live, the capture clock in a
    /// replay, so that a replay's decisions depend only on its capture and not on `--speed` (at speed 16 a
    /// wall-clock settle of 1 s kept the site silent for 16 s of capture). In a replay the gateway connects
    /// before it reads the capture (clock 0), so it settles at once when the capture starts: every gateway of a
    /// side-by-side replay is online by then (`replay_wait_for_gateways`).
    private var roomWall: Double { isReplay ? clock : SystemClock.monotonic() }

    /// A connected replay with rooms waits (at most 5 s) for its own `online` to come back from the broker and
    /// hands it to the coordinator before the loop takes in the capture: the coordinator counts itself online
    /// from then, and arriving at a wall-clock moment during the capture it would start the leader settle at a
    /// capture time that depends on `--speed`.
    func waitForOwnOnline() async {
        guard let rooms, publisher.counters.connected else { return }
        let own: Set = [configuration.gateway.id]
        let deadline = SystemClock.monotonic() + 5
        while rooms.inbox.onlineCount(among: own) == 0, SystemClock.monotonic() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        await handleRoomMessages()
    }

    /// Every waiting inbound message through the coordinator.
    func handleRoomMessages() async {
        guard rooms != nil else { return }
        var effects = noteRoomConnection()
        let wall = roomWall
        let commands = encoder.layout.roomsCommandBase
        let fingerprints = rooms?.coordinator.arbiter.fingerprints
        defer { noteFingerprints(since: fingerprints) }
        for message in rooms?.inbox.takeAll() ?? [] {
            if let verb = RoomCommand.verb(inTopic: message.topic, commandBase: commands) {
                effects += roomCommand(verb: verb, payload: message.payload)
                continue
            }
            effects += rooms?.coordinator.receive(message, wall: wall) ?? []
        }
        await perform(effects)
    }

    /// This gateway's own sightings, straight from its engine (the broker's echo of them is dropped).
    func feedRoomSightings(_ events: [EngineEvent]) async {
        guard rooms != nil else { return }
        var effects: [RoomCoordinator.Effect] = []
        for case let .sighting(sighting) in events {
            guard let observation = RoomSighting(gatewayID: configuration.gateway.id, event: sighting) else { continue }
            effects += rooms?.coordinator.ownSighting(observation) ?? []
        }
        await perform(effects)
    }

    /// Time passes: on every tick, and between ticks once a second of capture time has passed (a replay).
    func advanceRooms(force: Bool) async {
        guard let current = rooms, force || clock - current.lastAdvance >= 1 else { return }
        rooms?.lastAdvance = clock
        var effects = noteRoomConnection()
        effects += rooms?.coordinator.advance(to: clock, wall: roomWall) ?? []
        await perform(effects)
        logReferenceNotices()
    }

    /// A reference tag decided in another room than its declared one (or back in it): one log line each.
    private func logReferenceNotices() {
        for notice in rooms?.coordinator.takeReferenceNotices() ?? [] {
            let metadata: Logger.Metadata = [
                "beacon": "\(notice.beaconID)", "declared": "\(notice.declared)", "decided": "\(notice.decided)",
            ]
            if notice.wrong {
                logger.warning("reference tag decided in another room", metadata: metadata)
            } else {
                logger.notice("reference tag back in its room", metadata: metadata)
            }
        }
    }

    /// Tells the coordinator when the publisher's connection came up or went down since the last look, with the
    /// publisher's count of connections (a stale "down" read after the next connection's own `online` already
    /// came back is ignored; a reconnect this look missed shows as a second own `online`: docs/rooms.md).
    private func noteRoomConnection() -> [RoomCoordinator.Effect] {
        guard let current = rooms else { return [] }
        let counters = publisher.counters
        guard counters.connected != current.connected else { return [] }
        rooms?.connected = counters.connected
        return rooms?.coordinator.connection(
            counters.connected, number: counters.connects, wall: roomWall) ?? []
    }

    func perform(_ effects: [RoomCoordinator.Effect]) async {
        guard let topics = rooms?.coordinator.topics else { return }
        for effect in effects {
            switch effect {
            case let .leadership(isLeader, leader):
                logger.notice(
                    isLeader ? "leading the room decisions" : "not leading the room decisions",
                    metadata: ["leader": "\(leader ?? "none")"])
                publishDiscovery()
            case let .publish(events):
                let needed = UInt64(events.count) * EventEncoder.maxEnvelopesPerRoomEvent
                if encoder.sequences.remaining < needed { await reserveSequences(atLeast: needed) }
                var envelopes: [EventEnvelope] = []
                for event in events {
                    do { envelopes += try encoder.encode(event, topics: topics) } catch {
                        telemetry.encodeFailures += 1
                        logger.error("cannot encode room event", metadata: ["error": "\(error)"])
                    }
                    logger.info(
                        "room",
                        metadata: [
                            "beacon": "\(event.beaconID)", "room": "\(event.roomName)",
                            "from": "\(event.from ?? "-")", "decision": "\(event.decision)",
                        ])
                }
                telemetry.submitted += envelopes.count
                // Bounded like every other event: waits while the publisher's mailbox is full.
                await publisher.admit(envelopes)
            case let .calibration(payload):
                // Retained, not stored in the outbox: the next solve supersedes it (docs/mqtt.md).
                let envelope = EventEnvelope(
                    id: configuration.gateway.id + "-calibration", gatewayID: configuration.gateway.id, sequence: 0,
                    captureTime: clock, kind: .room, topic: topics.calibration, qos: 1, retain: true,
                    payload: payload)
                telemetry.submitted += 1
                publisher.publishSnapshot([envelope])
                if let solution = rooms?.coordinator.calibration?.solution {
                    let offsets = solution.offsets.map {
                        "\($0.gatewayID)=\(Self.decibels($0.receive))/\(Self.decibels($0.confidence))"
                    }
                    logger.info(
                        "calibration published",
                        metadata: ["pairs": "\(solution.pairs)", "offsets": "\(offsets.joined(separator: ","))"])
                }
            case let .probabilities(list):
                // Retained snapshots at QoS 0, never stored: the next one supersedes each (docs/mqtt.md).
                let envelopes = list.map { snapshot in
                    EventEnvelope(
                        id: configuration.gateway.id + "-probabilities", gatewayID: configuration.gateway.id,
                        sequence: 0, captureTime: snapshot.time, kind: .room,
                        topic: topics.probabilities(beaconID: snapshot.beaconID), qos: 0, retain: true,
                        payload: snapshot.payload)
                }
                telemetry.submitted += envelopes.count
                publisher.publishSnapshot(envelopes)
            case let .fingerprint(room, payload):
                publishFingerprint(room: room, payload: payload, topic: topics.fingerprint(room: room))
            case let .reply(verb, payload):
                replyToRoomCommand(verb: verb, payload: payload)
            case let .republish(states):
                if encoder.sequences.remaining < UInt64(states.count) * EventEncoder.maxEnvelopesPerRoomEvent {
                    await reserveSequences(atLeast: UInt64(states.count) * EventEncoder.maxEnvelopesPerRoomEvent)
                }
                var envelopes: [EventEnvelope] = []
                for state in states {
                    // The `room` state only (the last envelope); enter/exit were events of their time.
                    do { if let last = try encoder.encode(state, topics: topics).last { envelopes.append(last) } } catch
                    {
                        telemetry.encodeFailures += 1
                    }
                }
                logger.info(
                    "room states published again after reconnecting", metadata: ["beacons": "\(envelopes.count)"])
                telemetry.submitted += envelopes.count
                publisher.publishSnapshot(envelopes)
            }
        }
    }

    /// SIGHUP with a changed `rooms:` section (rooms on before and after): the arbiter's parameters, gateways,
    /// offsets and leader settle time apply at once, evidence and decisions kept. Turning rooms on or off needs a
    /// restart (the subscriptions are made at start); the caller says so.
    func reloadRooms(_ loaded: GatewayConfiguration) async {
        guard rooms != nil, loaded.rooms.enabled, loaded.rooms != configuration.rooms else { return }
        var next = loaded.rooms
        if let running = rooms?.coordinator.topics,
            next.topics(prefix: configuration.topics.prefix, own: configuration.gateway) != running
        {
            // This gateway's zone changed (another zone, or its zone's gateways): its subscriptions and topics are
            // made at start, so the zones apply after a restart; until then the running zones keep the arbiter
            // consistent with its subscriptions. Not refused: a site push is committed and a restart starts on it
            // (a refused push could never move a gateway, the retained push coming again after every restart).
            let configured = next.zone(of: configuration.gateway.id)
            let kept = "\(running.zone ?? "none") (\(running.zoneGateways.joined(separator: ",")))"
            logger.warning(
                "rooms.zones: this gateway's zone changed; it applies after a restart, the running zone is kept",
                metadata: [
                    "key": "rooms.zones", "running": "\(kept)",
                    "configured":
                        "\(configured?.name ?? "none") (\(configured?.gateways.sorted().joined(separator: ",") ?? ""))",
                ])
            next.zones = configuration.rooms.zones
        }
        let settings = next.arbiterSettings(own: loaded.gateway)
        rooms?.gateways = Set(settings.gatewayRooms.keys)
        let effects =
            rooms?.coordinator.reconfigure(
                settings: settings, leaderSettle: loaded.rooms.leaderSettle, wall: roomWall) ?? []
        rooms?.coordinator.setReferenceTags(DaemonRooms.referenceTags(next, arbiter: settings))
        configuration.rooms = next
        logger.notice("rooms reloaded", metadata: ["gateways": "\(settings.gatewayRooms.count)"])
        await perform(effects)
        publishDiscovery()
    }

    /// The arbiter's counters for the telemetry event (docs/rooms.md, "Telemetry").
    var roomTelemetry: [(String, Int64)] {
        guard let rooms else { return [] }
        let counters = rooms.coordinator.counters
        return [
            ("rooms_leader", rooms.coordinator.isLeader ? 1 : 0),
            ("rooms_beacons_tracked", Int64(rooms.coordinator.trackedBeacons)),
            ("rooms_decisions", Int64(counters.decisions)),
            ("rooms_switches", Int64(counters.switches)),
            ("rooms_published", Int64(counters.published)),
            ("rooms_own_sightings", Int64(counters.ownSightings)),
            ("rooms_peer_sightings", Int64(counters.peerSightings)),
            ("rooms_peer_gone", Int64(counters.peerGone)),
            ("rooms_echoes_dropped", Int64(counters.echoesDropped)),
            ("rooms_bad_inbound", Int64(counters.malformed)),
            ("rooms_beacons_refused", Int64(counters.beaconsRefused)),
            ("rooms_inbox_dropped", Int64(rooms.inbox.dropped)),
            ("rooms_identity_sightings", Int64(counters.identitySightings)),
            ("rooms_calibration_solves", Int64(counters.calibrationSolves)),
            ("rooms_calibrations_restored", Int64(counters.calibrationsRestored)),
            ("rooms_reference_tags", Int64(rooms.coordinator.references.tags.count)),
            ("rooms_reference_right_s", Int64(rooms.coordinator.references.rightSeconds.rounded())),
            ("rooms_reference_wrong_s", Int64(rooms.coordinator.references.wrongSeconds.rounded())),
            ("rooms_reference_unknown_s", Int64(rooms.coordinator.references.unknownSeconds.rounded())),
            ("rooms_reference_wrong_now", Int64(rooms.coordinator.references.wrongNow)),
            ("rooms_fingerprints", Int64(rooms.coordinator.arbiter.fingerprints.rooms.count)),
            ("rooms_trainings", Int64(counters.trainings)),
            ("rooms_fingerprints_read", Int64(counters.fingerprintsRead)),
        ]
    }

    /// Two decimals, for log lines.
    static func decibels(_ value: Double) -> String { String((value * 100).rounded() / 100) }

    /// The identity beacon this gateway advertises beside its scan (self-calibration), nil when it does not
    /// (rooms or calibration off, `advertise: false`).
    static func identityAdvertising(_ configuration: GatewayConfiguration) -> AdvertisingParameters? {
        let rooms = configuration.rooms
        guard rooms.advertisesIdentity else { return nil }
        let (major, minor) = CalibrationSettings.identity(of: configuration.gateway.id)
        guard
            let data = AdvertisingParameters.iBeacon(
                uuid: rooms.calibration.uuid, major: major, minor: minor,
                measuredPower: CalibrationSettings.measuredPower)
        else { return nil }
        return AdvertisingParameters(
            intervalUnits: AdvertisingParameters.units(milliseconds: rooms.calibration.intervalMilliseconds),
            data: data, txPower: Int8(clamping: rooms.calibration.txPower))
    }

    /// The site's room entities, when this gateway leads (appended to its own discovery configs).
    func roomDiscovery(_ discovery: HomeAssistantDiscovery, beacons: [HomeAssistantDiscovery.Beacon])
        -> [ControlMessage]
    {
        guard let rooms, rooms.coordinator.isLeader else { return [] }
        return discovery.roomMessages(
            beacons: beacons, topics: rooms.coordinator.topics, gateways: rooms.gateways.sorted())
            + discovery.trainingMessages(
                rooms: rooms.coordinator.siteRooms.sorted(), leader: configuration.gateway.id,
                topics: rooms.coordinator.topics, gateways: rooms.gateways.sorted(),
                training: configuration.rooms.training)
    }
}
