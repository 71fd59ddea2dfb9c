import BeaconModel

/// Training in the gateway (issue 29; docs/rooms.md, "Training, step by step"): a rooms command starts a walk
/// (`FingerprintRecorder`) that records every gateway's sightings of one device, this gateway's and its peers'
/// alike, at the level the arbiter compares (the raw or smoothed RSSI as `rooms.signal` says, less the
/// gateway's receive offset at the time). At its end (capture time, plus `trainingGrace` for peers' sightings
/// still on their way) the walk is pooled into the room's fingerprint, the arbiter gets the book, and this
/// gateway publishes the room's pooled fingerprint retained on `<prefix>/rooms/fingerprint/<room>`. Every
/// gateway reads those retained messages into its arbiter, so a new leader has them; an empty retained message
/// is a forgotten room.
extension RoomCoordinator {
    /// Capture seconds after a walk's end before it is closed: peers' sightings of its last seconds arrive
    /// through the broker after this gateway's own.
    public static let trainingGrace = 2.0

    /// The walk running here, if any.
    public var trainingWalk: FingerprintRecorder? { training?.recorder }

    /// The site's rooms (the values of `rooms.gateways`).
    public var siteRooms: Set<String> {
        Set(arbiter.settings.gatewayRooms.values).union(arbiter.settings.roomsWithoutGateway)
    }

    /// A rooms command (`<prefix>/<gateway>/command/rooms/<verb>`) at capture time `now` (the daemon's clock).
    public mutating func command(verb: String, payload: [UInt8], now: Timestamp) -> [Effect] {
        let replyVerb = RoomCommand.verbs.contains(verb) ? verb : RoomCommand.invalidVerb
        func refuse(_ failure: RoomCommand.Failure) -> [Effect] {
            [.reply(verb: replyVerb, payload: RoomCommand.failure(failure, verb: replyVerb))]
        }
        switch RoomCommand.parse(verb: verb, payload: payload, rooms: siteRooms) {
        case let .failure(failure):
            return refuse(failure)
        case let .success(.train(id, room, device, seconds)):
            if let running = training?.recorder {
                return refuse(
                    RoomCommand.Failure(
                        id: id, kind: "busy", step: "train",
                        message:
                            "a training of `\(running.room)` with `\(running.deviceID)` runs until capture time \(running.end)"
                    ))
            }
            let start = max(clock, now)
            guard start.isFinite, start > 0 else {
                return refuse(
                    RoomCommand.Failure(
                        id: id, kind: "not_ready", step: "clock",
                        message: "no capture time yet (a replay that has not started its capture)"))
            }
            let recorder = FingerprintRecorder(room: room, deviceID: device, start: start, duration: seconds)
            training = (id, recorder)
            return [.reply(verb: "train", payload: RoomCommand.trainingStarted(recorder, id: id, gateway: gatewayID))]
        case let .success(.forget(id, room)):
            var book = arbiter.fingerprints
            let had = book.forget(room)
            arbiter.setFingerprints(book)
            // The empty retained message removes the room's fingerprint on the broker and in every gateway, also
            // where this gateway had none (it may have missed it).
            return [
                .fingerprint(room: room, payload: ""),
                .reply(
                    verb: "forget", payload: RoomCommand.forgotten(room: room, had: had, id: id, gateway: gatewayID)),
            ]
        }
    }

    /// A sighting of the training device by a gateway of the site: one report of the walk.
    mutating func recordTraining(_ sighting: RoomSighting) {
        guard var running = training, sighting.beaconID == running.recorder.deviceID,
            arbiter.settings.gatewayRooms[sighting.gatewayID] != nil
        else { return }
        let settings = arbiter.settings
        let reported = settings.useRawRSSI ? (sighting.rawRSSI ?? sighting.rssi) : sighting.rssi
        let level = reported - (settings.receiverOffsets[sighting.gatewayID] ?? 0)
        running.recorder.add(gateway: sighting.gatewayID, level: level, at: sighting.time)
        training = running
    }

    /// Closes the walk once its time and the grace are over: pooled into the room's fingerprint, published.
    mutating func finishTraining(at now: Timestamp) -> [Effect] {
        guard let (id, recorder) = training, now >= recorder.end + RoomCoordinator.trainingGrace else { return [] }
        training = nil
        counters.trainings += 1
        guard let walk = recorder.fingerprint() else {
            let failure = RoomCommand.Failure(
                id: id, kind: "not_heard", step: "record",
                message:
                    "no gateway of the site heard `\(recorder.deviceID)` during the \(recorder.duration) s: is the device id right and the device advertising?"
            )
            return [.reply(verb: "train", payload: RoomCommand.failure(failure, verb: "train"))]
        }
        var book = arbiter.fingerprints
        guard book.add(walk), let pooled = book[walk.room] else {
            let failure = RoomCommand.Failure(
                id: id, kind: "full", step: "store",
                message: "\(FingerprintBook.maximumRooms) rooms have fingerprints already")
            return [.reply(verb: "train", payload: RoomCommand.failure(failure, verb: "train"))]
        }
        arbiter.setFingerprints(book)
        return [
            .fingerprint(room: walk.room, payload: FingerprintBook.payload(pooled, gateway: gatewayID)),
            .reply(
                verb: "train", payload: RoomCommand.trainingDone(recorder, pooled: pooled, id: id, gateway: gatewayID)),
        ]
    }

    /// A retained fingerprint from the broker (any gateway's, this one's echo included): it replaces the room's
    /// fingerprint; empty, the room's fingerprint is removed. One that does not read, names another room than
    /// its topic, or a room outside the site is counted as bad inbound; it is also held (`unplaced`) so that a
    /// reload that adds its room or gateways reads it then (the broker does not send a retained message twice).
    mutating func readFingerprint(roomLevel: String, payload: [UInt8]) -> [Effect] {
        unplaced[roomLevel] = nil
        if payload.isEmpty {
            var book = arbiter.fingerprints
            if let room = book.rooms.keys.first(where: { TopicLevel.safe($0) == roomLevel }) {
                book.forget(room)
                arbiter.setFingerprints(book)
            }
            counters.fingerprintsRead += 1
            return []
        }
        guard place(roomLevel: roomLevel, payload: payload) else {
            counters.malformed += 1
            if unplaced.count < FingerprintBook.maximumRooms, payload.count <= 65_536 { unplaced[roomLevel] = payload }
            return []
        }
        counters.fingerprintsRead += 1
        return []
    }

    /// Sets the fingerprint of `payload` in the arbiter's book when it reads, names the room of its topic level
    /// and that room is one of the site's; false (nothing changed) otherwise.
    private mutating func place(roomLevel: String, payload: [UInt8]) -> Bool {
        var book = arbiter.fingerprints
        guard let fingerprint = FingerprintBook.fingerprint(payload: payload, site: candidates),
            TopicLevel.safe(fingerprint.room) == roomLevel, siteRooms.contains(fingerprint.room),
            book.set(fingerprint)
        else { return false }
        arbiter.setFingerprints(book)
        return true
    }

    /// After a reload: the held fingerprints whose room (and gateways) the site now has go into the book.
    mutating func placeHeldFingerprints() {
        for (roomLevel, payload) in unplaced.sorted(by: { $0.key < $1.key })
        where place(roomLevel: roomLevel, payload: payload) {
            unplaced[roomLevel] = nil
            counters.fingerprintsRead += 1
        }
    }
}
