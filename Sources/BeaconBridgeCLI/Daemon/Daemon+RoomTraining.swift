import BeaconEvents
import BeaconRooms
import BeaconRuntime
import DeviceProtocols
import MQTTPublisher

/// Training in the daemon (issue 29; docs/rooms.md, "Training, step by step"): the rooms commands on
/// `<prefix>/<gateway>/command/rooms/<verb>` go to the coordinator (`RoomCoordinator+Training`) on the loop; its
/// replies go out as command replies (`<prefix>/<gateway>/reply/rooms/<verb>`, never in the outbox) and its
/// fingerprints retained on `<prefix>/rooms/fingerprint/<room>`.
extension Daemon {
    /// One rooms command, at the daemon's capture clock.
    func roomCommand(verb: String, payload: [UInt8]) -> [RoomCoordinator.Effect] {
        logger.info("rooms command", metadata: ["verb": "\(String(verb.prefix(32)))", "bytes": "\(payload.count)"])
        return rooms?.coordinator.command(verb: verb, payload: payload, now: clock) ?? []
    }

    func replyToRoomCommand(verb: String, payload: String) {
        logger.info("rooms command reply", metadata: ["verb": "\(verb)", "reply": "\(payload)"])
        status?.noteActionReply(payload)
        publisher.publishReply(
            ControlMessage(topic: encoder.layout.roomsReply(verb), payload: payload, qos: 1, retain: false),
            lifetime: GATTSettings.replyLifetime)
    }

    /// A room's fingerprint, retained (an empty payload removes it from the broker): a snapshot, not stored in
    /// the outbox, as the calibration (a newer walk supersedes it).
    func publishFingerprint(room: String, payload: String, topic: String) {
        let envelope = EventEnvelope(
            id: configuration.gateway.id + "-fingerprint-" + room, gatewayID: configuration.gateway.id, sequence: 0,
            captureTime: clock, kind: .room, topic: topic, qos: 1, retain: true, payload: payload)
        telemetry.submitted += 1
        publisher.publishSnapshot([envelope])
        if let fingerprint = rooms?.coordinator.arbiter.fingerprints[room] {
            logger.notice(
                "fingerprint published",
                metadata: [
                    "room": "\(room)", "walks": "\(fingerprint.walks)",
                    "seconds": "\(Self.decibels(fingerprint.seconds))",
                    "gateways": "\(fingerprint.levels.keys.sorted().joined(separator: ","))",
                    "quality": "\(Self.decibels(fingerprint.quality))",
                ])
        } else {
            logger.notice("fingerprint forgotten", metadata: ["room": "\(room)"])
        }
    }

    /// Logs the arbiter's fingerprints when messages from the broker changed them (a retained fingerprint read
    /// at the start or published by another gateway, or removed).
    func noteFingerprints(since before: FingerprintBook?) {
        guard let after = rooms?.coordinator.arbiter.fingerprints, after != before else { return }
        let rooms = after.rooms.keys.sorted().compactMap { room in
            after[room].map {
                "\(room)(walks \($0.walks), \(Self.decibels($0.seconds)) s, quality \(Self.decibels($0.quality)))"
            }
        }
        logger.notice(
            "fingerprints read", metadata: ["rooms": "\(rooms.isEmpty ? "none" : rooms.joined(separator: " "))"])
    }
}
