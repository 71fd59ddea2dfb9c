import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// Events the broker will not accept are an outcome, not a retry loop (docs/outbox.md, "Refused events"):
/// they go to the dead-letter table with the reason, and every event behind them is delivered.
@Suite(.serialized) struct RefusalTests {
    static let gateway = "refgw"

    struct Bed {
        let directory: String
        let broker: MosquittoProcess
        let database: GatewayDatabase
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: RefusalTests.gateway)

        /// A broker with `brokerConfig` lines and a fresh outbox database.
        init(brokerConfig: (String) throws -> String) throws {
            directory = try TestDirectory.make(prefix: "bb-refusal")
            broker = try MosquittoProcess(extraConfig: try brokerConfig(directory))
            database = try GatewayDatabase(settings: OutboxSettings(path: directory + "/outbox.sqlite"))
        }

        func publisher(_ version: MQTTSettings.ProtocolVersion) throws -> EventPublisher {
            var settings = loopbackSettings(port: broker.port)
            settings.protocolVersion = version
            return try EventPublisher(configuration: .init(mqtt: settings, layout: layout), outbox: database)
        }
    }

    /// Presence events (allowed) and region events (denied by the broker's ACL), interleaved.
    static func mixedEvents(_ encoder: inout SequencedEncoder, count: Int) async throws -> [EventEnvelope] {
        try await encoder.encode(
            (0..<count).map { index in
                index % 3 == 1 ? EventFactory.region(index, kind: .enter) : EventFactory.presence(index, state: .seen)
            })
    }

    /// A broker whose ACL denies the region topics. Over MQTT 5 mosquitto answers PUBACK 0x87 (not
    /// authorized): dead-lettered, never counted as delivered. Over MQTT 3.1.1 it has no way to say so and
    /// sends a plain PUBACK: the gateway cannot tell (docs/outbox.md), but nothing stalls. The test broker sets
    /// `max_queued_messages 0` (unlimited), with which mosquitto 2.0.11 also closes the connection after every
    /// denied PUBLISH (its quota check counts 0 as exceeded): libmosquitto must not resend the denied
    /// message on every reconnect, or delivery would loop forever (as it did).
    @Test(arguments: [MQTTSettings.ProtocolVersion.v5, .v311])
    func aTopicTheACLDeniesIsDeadLetteredAndNeverCountedAsDelivered(version: MQTTSettings.ProtocolVersion) async throws
    {
        let bed = try Bed { directory in
            let acl = directory + "/acl"
            try "topic readwrite #\ntopic deny beaconbridge/\(RefusalTests.gateway)/region/#\n"
                .write(toFile: acl, atomically: true, encoding: .utf8)
            return "acl_file \(acl)\nlog_type debug"
        }
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        var encoder = SequencedEncoder(layout: bed.layout, database: bed.database)
        // Over 3.1.1 each denied event costs five short-lived connections: fewer of them.
        let half = version == .v5 ? 30 : 6
        let buffered = try await Self.mixedEvents(&encoder, count: half)  // published before the broker is up
        let live = try await Self.mixedEvents(&encoder, count: half)
        let all = buffered + live
        let allowed = all.filter { $0.kind == .presence }
        let denied = all.filter { $0.kind == .region }

        let publisher = try bed.publisher(version)
        try await withRunningPublisher(publisher) {
            publisher.publish(buffered)
            try await waitUntil("the early events in the outbox", timeout: 60) {
                publisher.counters.queued >= buffered.count
            }
            try await bed.broker.start()
            let subscriber = try TestSubscriber(
                port: bed.broker.port, patterns: ["beaconbridge/\(RefusalTests.gateway)/#"])
            try await subscriber.start()
            defer { Task { await subscriber.stop() } }
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            publisher.publish(live)
            do {
                try await waitUntil("every allowed event delivered", timeout: 120) {
                    Set(subscriber.messages.compactMap { $0.json?["id"]?.string }).isSuperset(of: allowed.map(\.id))
                }
            } catch {
                let c = publisher.counters
                let seen = Set(subscriber.messages.compactMap { $0.json?["id"]?.string })
                Issue.record(
                    "\(error); \(allowed.filter { seen.contains($0.id) }.count) of \(allowed.count) allowed received; counters: deadLettered \(c.deadLettered), acknowledged \(c.acknowledged), backlog \(c.backlogRows), retried \(c.refusalsRetried), connected \(c.connected), last error \(c.lastError ?? "none")"
                )
                throw error
            }
            if version == .v5 {
                do {
                    try await waitUntil("every denied event dead-lettered", timeout: 120) {
                        publisher.counters.deadLettered >= denied.count
                    }
                } catch {
                    // Say where delivery stood (a stall is a defect to find, not a slow machine).
                    let c = publisher.counters
                    let letters = (try? await bed.database.deadLetters(limit: 1000).map(\.envelope.sequence)) ?? []
                    let rows = (try? await bed.database.peek(after: nil, limit: 1000).map(\.sequence)) ?? []
                    Issue.record(
                        "\(error); counters: deadLettered \(c.deadLettered) of \(denied.count), \(c); dead letters \(letters), denied \(denied.map(\.sequence)), outbox rows \(rows); broker log: \(bed.broker.log.suffix(3000))"
                    )
                    throw error
                }
            }
            try await waitUntil("outbox emptied", timeout: 60) { publisher.counters.backlogRows == 0 }
            if version == .v5 {
                // No acknowledgement is counted for a refused event.
                #expect(publisher.counters.acknowledged == allowed.count)
            }
            let received = subscriber.messages.compactMap { $0.json?["id"]?.string }
            #expect(received.filter { id in denied.contains { $0.id == id } }.isEmpty)
        }
        let letters = try await bed.database.deadLetters(limit: 1000)
        #expect(try await bed.database.stats().rows == 0)
        if version == .v5 {
            #expect(letters.map(\.envelope.id) == denied.map(\.id))
            #expect(letters.allSatisfy { $0.reason == "broker refused: not authorized (0x87)" && $0.attempts == 1 })
        } else {
            // The broker acknowledged them (MQTT 3.1.1 PUBACKs carry no reason): nothing to dead-letter.
            #expect(letters.isEmpty)
            #expect(publisher.counters.deadLettered == 0)
        }
    }

    /// An event larger than the broker's `max_packet_size` (the broker announces it in CONNACK over MQTT 5;
    /// over MQTT 3.1.1 it closes the connection when the packet arrives).
    @Test(arguments: [MQTTSettings.ProtocolVersion.v5, .v311])
    func anOversizedEventDoesNotStopTheEventsBehindIt(version: MQTTSettings.ProtocolVersion) async throws {
        let bed = try Bed { _ in "max_packet_size 3000" }
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        var encoder = SequencedEncoder(layout: bed.layout, database: bed.database)
        var events = try await encoder.encode((0..<12).map { EventFactory.presence($0, state: .seen) })
        // The fourth carries a 6 kB field: still valid JSON, too large for this broker.
        events[3].payload =
            String(events[3].payload.dropLast()) + #","note":""# + String(repeating: "x", count: 6000) + #""}"#
        let poison = events[3]
        let sent = events
        try await bed.broker.start()
        let subscriber = try TestSubscriber(port: bed.broker.port, patterns: ["beaconbridge/\(RefusalTests.gateway)/#"])
        try await subscriber.start()
        defer { Task { await subscriber.stop() } }

        let publisher = try bed.publisher(version)
        try await withRunningPublisher(publisher) {
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            publisher.publish(sent)
            try await waitUntil("the oversized event dead-lettered", timeout: 60) {
                publisher.counters.deadLettered == 1
            }
            try await waitUntil("every other event delivered", timeout: 60) {
                Set(subscriber.messages.compactMap { $0.json?["id"]?.string })
                    .isSuperset(of: sent.filter { $0.id != poison.id }.map(\.id))
            }
            try await waitUntil("outbox emptied", timeout: 60) { publisher.counters.backlogRows == 0 }
        }
        let letters = try await bed.database.deadLetters(limit: 10)
        #expect(letters.map(\.envelope.id) == [poison.id])
        let reason = letters.first?.reason ?? ""
        if version == .v5 {
            #expect(reason.hasPrefix("client refused:"), "reason: \(reason)")
        } else {
            #expect(reason == "broker closed the connection right after this message, 5 times in a row")
        }
        #expect(!subscriber.messages.contains { $0.json?["id"]?.string == poison.id })
    }
}
