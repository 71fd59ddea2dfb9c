import BeaconConfig
import BeaconEvents
import BeaconModel
import BeaconRooms
import BeaconRuntime
import BeaconTracking
import DeviceProtocols
import MQTTPublisher
import SQLiteStore
import Synchronization

/// Inbound messages for teaching (issue 43): the site's regions commands and the retained taught records,
/// handed from the subscription tasks to the loop. Bounded: beyond `capacity` the oldest are dropped, counted.
final class TeachInbox: Sendable {
    static let capacity = 1_000
    private let state = Mutex<(messages: [InboundMessage], dropped: Int)>(([], 0))

    /// Adds a message; true when the inbox was empty (the caller then wakes the loop).
    func add(_ message: InboundMessage) -> Bool {
        state.withLock { state in
            if state.messages.count >= TeachInbox.capacity {
                state.messages.removeFirst()
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
}

/// Teaching in the daemon (docs/teach.md): the site's `TaughtBook` (stored in the state database, published
/// retained, read back from the broker), the engine's table derived from it, and a replay's `--teach` windows.
struct DaemonTeaching {
    var book: TaughtBook
    let inbox = TeachInbox()
    /// `replay --teach`: teaches to start when the capture reaches their start.
    var scheduled: [ScheduledTeach]
    /// Taught records refused (malformed, another site, an unknown region), for telemetry.
    var refused = 0
    /// A replay's first event's capture time (`--teach` windows count from it).
    var captureStart: Timestamp?
    /// The capture time teaches last advanced at (a replay advances them once a second of capture time).
    var lastAdvance: Timestamp = -.infinity
    /// This gateway's records watched for a move (self-calibration's levels against their anchors).
    var moveWatch = TaughtMoveWatch()
    /// The time the watch last looked.
    var lastMoveCheck: Timestamp = -.infinity

    init(site: String, scheduled: [ScheduledTeach]) {
        book = TaughtBook(site: site)
        self.scheduled = scheduled.sorted { $0.start < $1.start }
    }

    /// The site's regions command topics: `<prefix>/regions/command/<verb>`.
    static func commandBase(prefix: String) -> String { TeachCommand.commandBase(prefix: prefix) }
    /// A gateway's reply topic: `<prefix>/<gateway>/reply/regions/<verb>`.
    static func replyTopic(layout: TopicLayout, verb: String) -> String {
        TeachCommand.replyTopic(gatewayBase: layout.base, verb: verb)
    }
}

extension Daemon {
    var regionNames: Set<String> { Set(configuration.regions.map(\.name)) }

    /// Subscribes the regions commands and the retained taught records; forwards them to the loop.
    func teachSubscriptionService() -> TaskService {
        let prefix = configuration.topics.prefix
        let filters = [DaemonTeaching.commandBase(prefix: prefix) + "/+"] + TaughtRecord.filters(prefix: prefix)
        let streams = filters.map { publisher.subscribe($0, qos: 1) }
        return TaskService("teaching") { [inbox = teaching.inbox, mailbox] in
            await withTaskGroup(of: Void.self) { group in
                for stream in streams {
                    group.addTask {
                        for await message in stream where inbox.add(message) { _ = mailbox.post(.teaching) }
                    }
                }
            }
        }
    }

    /// Reads the stored taught records at start (each checked again: a region no longer configured, a damaged
    /// row is refused with a log line and left out) and applies this gateway's table.
    func loadTaught() async {
        guard let stateStore else { return }
        let rows: [StoredTaughtRecord]
        do { rows = try await stateStore.storedTaughtRecords() } catch {
            logger.error(
                "cannot read the taught records; deciding by the configured levels", metadata: ["error": "\(error)"])
            return
        }
        for row in rows {
            switch TaughtRecord.parse(
                Array(row.payload.utf8), site: configuration.topics.prefix, regions: regionNames, topic: row.topic)
            {
            case let .success(record): teaching.book.put(record)
            case let .failure(failure):
                logger.warning(
                    "stored taught record refused", metadata: ["topic": "\(row.topic)", "reason": "\(failure.message)"])
            }
        }
        applyTaught(reason: "stored")
    }

    /// Hands this gateway's table to the engine, and logs what it decides by.
    func applyTaught(reason: String) {
        let table = teaching.book.table(gateway: configuration.gateway.id)
        guard table != pipeline.engine.taught else { return }
        pipeline.setTaught(table)
        let links = table.links.keys.sorted().map { key in
            let levels = table.links[key]?.levels
            return
                "\(key.region)/\(key.beaconID)(\(levels.map { "\(Self.decibels($0.enter))/\(Self.decibels($0.exit))" } ?? "-"))"
        }
        let powers = table.referencePowers.keys.sorted().map { "\($0)=\(table.referencePowers[$0] ?? 0)" }
        logger.notice(
            "taught levels applied",
            metadata: [
                "reason": "\(reason)", "links": "\(links.isEmpty ? "none" : links.joined(separator: " "))",
                "reference_powers": "\(powers.isEmpty ? "none" : powers.joined(separator: " "))",
            ])
    }

    /// Every waiting command and retained record, in order.
    func handleTeachMessages() async {
        let commands = DaemonTeaching.commandBase(prefix: configuration.topics.prefix)
        for message in teaching.inbox.takeAll() {
            if let verb = TeachCommand.verb(inTopic: message.topic, commandBase: commands) {
                await teachCommand(verb: verb, payload: message.payload)
            } else {
                await receiveTaught(message)
            }
        }
    }

    /// A retained taught record (or its removal) from the broker: checked, then stored and applied.
    private func receiveTaught(_ message: InboundMessage) async {
        let prefix = configuration.topics.prefix
        if message.payload.isEmpty {
            guard let removed = teaching.book.remove(topic: message.topic) else { return }
            await unstore(topic: message.topic)
            logger.notice(
                "taught record removed",
                metadata: [
                    "gateway": "\(removed.gateway)", "device": "\(removed.device)",
                    "region": "\(removed.region ?? "1m")",
                ])
            applyTaught(reason: "removed")
            return
        }
        switch TaughtRecord.parse(message.payload, site: prefix, regions: regionNames, topic: message.topic) {
        case let .failure(failure):
            teaching.refused += 1
            logger.warning(
                "taught record refused",
                metadata: [
                    "topic": "\(String(message.topic.prefix(200)))", "step": "\(failure.step)",
                    "reason": "\(failure.message)",
                ])
        case let .success(record):
            guard teaching.book.records[message.topic] != record else { return }
            guard teaching.book.put(record) else {
                logger.warning("taught record refused: the book is full", metadata: ["topic": "\(message.topic)"])
                return
            }
            await store(record)
            logger.notice(
                "taught record received",
                metadata: [
                    "gateway": "\(record.gateway)", "device": "\(record.device)", "region": "\(record.region ?? "1m")",
                ])
            applyTaught(reason: "received")
        }
    }

    private func store(_ record: TaughtRecord) async {
        guard let stateStore else { return }
        let stored = StoredTaughtRecord(
            topic: record.topic(prefix: configuration.topics.prefix), payload: record.json, recorded: record.recorded)
        do { try await stateStore.storeTaughtRecord(stored) } catch {
            logger.error("cannot save a taught record", metadata: ["error": "\(error)"])
        }
    }

    private func unstore(topic: String) async {
        guard let stateStore else { return }
        do { try await stateStore.removeTaughtRecord(topic: topic) } catch {
            logger.error("cannot remove a taught record", metadata: ["error": "\(error)"])
        }
    }

    /// One regions command: a teach starts recording, a forget removes what this gateway knows of the pair.
    func teachCommand(verb: String, payload: [UInt8]) async {
        logger.info("regions command", metadata: ["verb": "\(String(verb.prefix(32)))", "bytes": "\(payload.count)"])
        switch TeachCommand.parse(verb: verb, payload: payload, regions: regionNames) {
        case let .failure(failure):
            reply(verb: TeachCommand.verbs.contains(verb) ? verb : TeachCommand.invalidVerb, failure: failure)
        case let .success(.teach(id, region, device, spot, seconds)):
            startTeach(id: id, region: region, device: device, spot: spot, seconds: seconds, start: clock)
        case let .success(.forget(id, region, device)):
            await forget(id: id, region: region, device: device)
        }
    }

    /// Starts a teach at capture time `start`, answering `started` or the refusal.
    func startTeach(id: String?, region: String?, device: String, spot: TeachSpot, seconds: Double, start: Timestamp) {
        func refuse(_ kind: String, _ step: String, _ message: String) {
            reply(verb: "teach", failure: TeachCommand.Failure(id: id, kind: kind, step: step, message: message))
        }
        guard start > 0, start.isFinite else {
            return refuse("not_ready", "clock", "the replay's capture has not started; send it again once it runs")
        }
        if let region, !pipeline.engine.mayMatch(device: device, region: region) {
            return refuse(
                "unknown_device", "device",
                "`\(String(device.prefix(64)))` does not match region `\(region)`'s rule on this gateway")
        }
        let recording = TeachRecording(
            id: id, region: region, device: device, spot: spot, start: start, seconds: seconds)
        if let kind = pipeline.startTeach(recording) {
            return refuse(
                kind, "device",
                "a teach of `\(String(device.prefix(64)))` (or \(RegionEngine.maxTeaches)) runs on this gateway")
        }
        logger.notice(
            "teach started",
            metadata: [
                "region": "\(region ?? "1m")", "device": "\(device)", "at": "\(spot.rawValue)", "seconds": "\(seconds)",
            ])
        reply(verb: "teach", Self.teachReply(recording, state: "started", gateway: configuration.gateway.id, at: start))
    }

    /// A replay's `--teach` windows that the capture has reached (their times count from the first event).
    func startScheduledTeaches() {
        guard let origin = teaching.captureStart else { return }
        while let next = teaching.scheduled.first, clock >= origin + next.start {
            teaching.scheduled.removeFirst()
            let start = max(clock, origin + next.start)
            guard origin + next.end > start else { continue }
            startTeach(
                id: "replay-\(next.region ?? "1m")-\(Int(next.start))", region: next.region, device: next.device,
                spot: next.spot, seconds: origin + next.end - start, start: start)
        }
    }

    /// Progress and ends of the running teaches at the loop's clock: replies, and a finished one's record.
    func advanceTeaches() async {
        if !teaching.scheduled.isEmpty { startScheduledTeaches() }
        if clock - teaching.lastMoveCheck >= Self.moveCheckInterval {
            teaching.lastMoveCheck = clock
            await markMovedRecords()
        }
        for update in pipeline.advanceTeaches(to: clock) {
            switch update {
            case let .progress(recording, at):
                reply(
                    verb: "teach",
                    Self.teachReply(recording, state: "recording", gateway: configuration.gateway.id, at: at))
            case let .done(recording):
                await finish(recording)
            }
        }
    }

    private func finish(_ recording: TeachRecording) async {
        let gateway = configuration.gateway.id
        let quality = recording.quality
        guard let level = recording.level, level.reports >= Self.minimumTeachReports else {
            logger.warning(
                "teach ended without enough reports; nothing stored",
                metadata: [
                    "region": "\(recording.region ?? "1m")", "device": "\(recording.device)",
                    "reports": "\(recording.reports)",
                ])
            reply(verb: "teach", Self.teachReply(recording, state: "done", gateway: gateway, at: clock, stored: false))
            return
        }
        var record =
            teaching.book.record(gateway: gateway, region: recording.region, device: recording.device)
            ?? TaughtRecord(
                site: configuration.topics.prefix, gateway: gateway, region: recording.region, device: recording.device,
                levels: [:], recorded: recording.end)
        // Taught again after a move: what was taught before the move no longer holds, whichever spot it was.
        if record.moved != nil { record.levels = [:] }
        record.levels[recording.spot] = level
        record.recorded = recording.end
        record.anchors = heardPeers()
        record.moved = nil
        guard await keepOwn(record) else {
            reply(
                verb: "teach",
                failure: .init(
                    id: recording.id, kind: "full", step: "store", message: "\(TaughtBook.capacity) taught records"))
            return
        }
        logger.notice(
            "teach stored",
            metadata: [
                "region": "\(recording.region ?? "1m")", "device": "\(recording.device)",
                "at": "\(recording.spot.rawValue)",
                "level": "\(Self.decibels(level.level))", "spread": "\(Self.decibels(level.spread))",
                "reports": "\(level.reports)", "good": "\(quality.isGood)",
            ])
        applyTaught(reason: "taught")
        reply(
            verb: "teach",
            Self.teachReply(recording, state: "done", gateway: gateway, at: clock, stored: true, record: record))
    }

    /// One of this gateway's own records into the book, the state database and the broker (retained); false when
    /// the book is full (nothing stored).
    private func keepOwn(_ record: TaughtRecord) async -> Bool {
        guard teaching.book.put(record) else { return false }
        await store(record)
        publishTaught(topic: record.topic(prefix: configuration.topics.prefix), payload: record.json)
        return true
    }

    /// What this gateway hears of its peers' identity beacons (self-calibration's medians; empty without it).
    private func heardPeers() -> [String: Double] {
        rooms?.coordinator.calibration?.solver.levelsHeard(by: configuration.gateway.id) ?? [:]
    }

    /// How often (s) this gateway's records are compared with what it hears of its peers.
    static let moveCheckInterval: Double = 30

    /// Marks, stores and publishes this gateway's records whose anchors say it moved (docs/teach.md, "When a
    /// gateway moves"). They are still used: the user is told to teach them again.
    private func markMovedRecords() async {
        let heard = heardPeers()
        guard !heard.isEmpty else { return }
        for record in teaching.moveWatch.check(
            teaching.book, gateway: configuration.gateway.id, heard: heard, at: clock)
        {
            guard await keepOwn(record) else { continue }
            logger.warning(
                "this gateway moved since it was taught; teach again",
                metadata: [
                    "region": "\(record.region ?? "1m")", "device": "\(record.device)",
                    "shift_db": "\(Self.decibels(record.moved?.shift ?? 0))", "peers": "\(record.moved?.peers ?? 0)",
                ])
        }
    }

    /// A teach keeps a level from at least this many reports (`TeachQuality` asks for more to call it good).
    static let minimumTeachReports = 5

    private func forget(id: String?, region: String?, device: String) async {
        let matching = teaching.book.records.filter { $0.value.device == device && $0.value.region == region }
        for (topic, record) in matching {
            teaching.book.remove(topic: topic)
            await unstore(topic: topic)
            // Each gateway clears its own retained record; the others' removals arrive from them.
            if record.gateway == configuration.gateway.id { publishTaught(topic: topic, payload: "") }
        }
        logger.notice(
            "taught forgotten",
            metadata: ["region": "\(region ?? "1m")", "device": "\(device)", "records": "\(matching.count)"])
        applyTaught(reason: "forgotten")
        reply(
            verb: "forget",
            JSONValue.object([
                ("id", id.map { .string($0) } ?? .null), ("ok", .bool(true)), ("op", .string("forget")),
                ("gateway", .string(configuration.gateway.id)), ("region", region.map { .string($0) } ?? .null),
                ("device", .string(device)), ("forgotten", .int(Int64(matching.count))),
            ]).serialized)
    }

    /// A taught record, retained (an empty payload removes it): a snapshot, not in the outbox.
    private func publishTaught(topic: String, payload: String) {
        let envelope = EventEnvelope(
            id: configuration.gateway.id + "-taught", gatewayID: configuration.gateway.id, sequence: 0,
            captureTime: clock, kind: .region, topic: topic, qos: 1, retain: true, payload: payload)
        telemetry.submitted += 1
        publisher.publishSnapshot([envelope])
    }

    private func reply(verb: String, failure: TeachCommand.Failure) {
        reply(
            verb: verb,
            JSONValue.object([
                ("id", failure.id.map { .string($0) } ?? .null), ("ok", .bool(false)), ("op", .string(verb)),
                ("gateway", .string(configuration.gateway.id)),
                (
                    "error",
                    .object([
                        ("kind", .string(failure.kind)), ("step", .string(failure.step)),
                        ("message", .string(failure.message)),
                    ])
                ),
            ]).serialized)
    }

    private func reply(verb: String, _ payload: String) {
        logger.info("regions command reply", metadata: ["verb": "\(verb)", "reply": "\(payload)"])
        status?.noteActionReply(payload)
        publisher.publishReply(
            ControlMessage(
                topic: DaemonTeaching.replyTopic(layout: encoder.layout, verb: verb), payload: payload, qos: 1,
                retain: false),
            lifetime: GATTSettings.replyLifetime)
    }

    /// A teach reply (docs/mqtt.md, "Regions commands"): `started`, `recording` (progress) or `done`.
    static func teachReply(
        _ recording: TeachRecording, state: String, gateway: String, at time: Timestamp, stored: Bool? = nil,
        record: TaughtRecord? = nil
    ) -> String {
        var members: [(String, JSONValue)] = [
            ("id", recording.id.map { .string($0) } ?? .null), ("ok", .bool(true)), ("op", .string("teach")),
            ("state", .string(state)), ("gateway", .string(gateway)),
            ("region", recording.region.map { .string($0) } ?? .null), ("device", .string(recording.device)),
            ("at", .string(recording.spot.rawValue)), ("seconds", .double(recording.seconds)),
            ("seconds_left", .double((recording.secondsLeft(at: time) * 10).rounded() / 10)),
            ("reports", .int(Int64(recording.reports))),
        ]
        if state == "done" {
            let level = recording.level
            members.append(
                (
                    "level",
                    level.map {
                        .object([
                            ("level", .double(($0.level * 100).rounded() / 100)),
                            ("spread", .double(($0.spread * 100).rounded() / 100)),
                            ("reports", .int(Int64($0.reports))),
                            ("seconds", .double(($0.seconds * 100).rounded() / 100)),
                        ])
                    } ?? .null
                ))
            let quality = recording.quality
            members.append(("good", .bool(quality.isGood)))
            members.append(("needs", .array(quality.needs.map { .string($0) })))
            members.append(("stored", .bool(stored ?? false)))
            if let levels = record?.link?.levels {
                members.append(
                    (
                        "levels",
                        .object([
                            ("enter", .double((levels.enter * 100).rounded() / 100)),
                            ("exit", .double((levels.exit * 100).rounded() / 100)),
                        ])
                    ))
            }
            if let power = record?.referencePower { members.append(("reference_power", .int(Int64(power)))) }
        }
        return JSONValue.object(members).serialized
    }
}

/// `replay --teach REGION:DEVICE:AT:START-END`: a teach over a window of the capture, in capture-time seconds
/// from its first event.
struct ScheduledTeach: Equatable {
    var region: String?
    var device: String
    var spot: TeachSpot
    /// Seconds from the capture's first event.
    var start: Double
    var end: Double

    /// Parses the option's value; a message naming the problem when it is wrong. The device id may contain
    /// colons (`ibeacon:<uuid>:1:2`): the region is before the first, AT and the window after the last two.
    static func parse(_ text: String) -> Result<ScheduledTeach, UsageError> {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 4 else {
            return .failure(
                UsageError("--teach needs REGION:DEVICE:AT:START-END (AT boundary, inside or 1m; REGION empty for 1m)"))
        }
        let region = parts[0]
        let device = parts[1..<(parts.count - 2)].joined(separator: ":")
        guard let spot = TeachSpot(rawValue: parts[parts.count - 2]) else {
            return .failure(UsageError("--teach: AT must be boundary, inside or 1m, not `\(parts[parts.count - 2])`"))
        }
        let window = parts[parts.count - 1].split(separator: "-", omittingEmptySubsequences: false)
        guard window.count == 2, let start = Double(window[0]), let end = Double(window[1]), start.isFinite,
            end.isFinite,
            start >= 0, end > start, end - start <= TeachCommand.secondsRange.upperBound
        else {
            return .failure(
                UsageError(
                    "--teach: the window must be START-END in seconds, START < END, at most \(Int(TeachCommand.secondsRange.upperBound)) s"
                ))
        }
        guard !device.isEmpty else { return .failure(UsageError("--teach: DEVICE is empty")) }
        guard spot == .oneMetre || !region.isEmpty else {
            return .failure(UsageError("--teach: REGION is required unless AT is 1m"))
        }
        return .success(
            ScheduledTeach(region: spot == .oneMetre ? nil : region, device: device, spot: spot, start: start, end: end)
        )
    }
}
