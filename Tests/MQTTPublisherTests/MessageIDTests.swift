import BeaconDelivery
import Foundation
import MQTTPublisher
import TestSupport
import Testing

/// libmosquitto numbers messages from 1 again on every rebuilt handle (each reconnect with a clean session),
/// while the publisher may still hold ids of the broken connection: an acknowledgement or an MQTT 5 refusal of
/// one connection then hit another message of the next (counted as delivered or refused wrongly, and the
/// message it displaced never sent again). The client's ids are unique for its lifetime.
@Suite(.serialized) struct MessageIDTests {
    @Test(arguments: [MQTTSettings.ProtocolVersion.v311, .v5])
    func messageIDsAreNeverReusedAfterAReconnect(version: MQTTSettings.ProtocolVersion) async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        var settings = loopbackSettings(port: broker.port)
        settings.protocolVersion = version
        let events = EventLog()
        let client = try MQTTClient(options: MQTTClientOptions(settings: settings, clientID: "ids-\(version.rawValue)"))
        {
            events.append($0)
        }
        client.start()
        @Sendable func connects() -> Int { events.all.filter { $0 == .connected }.count }
        @Sendable func acknowledged() -> Set<Int32> {
            Set(events.all.compactMap { if case let .acknowledged(id) = $0 { id } else { nil } })
        }
        func publishThree() throws -> [Int32] {
            try (0..<3).map { index in
                try client.publish(topic: "ids/\(index)", payload: "x", qos: 1, retain: false).get()
            }
        }
        var ids: [Int32] = []
        for round in 1...3 {
            try await waitUntil("connection \(round)", timeout: 60) { connects() >= round }
            let sent = try publishThree()
            try await waitUntil("round \(round) acknowledged", timeout: 60) { acknowledged().isSuperset(of: sent) }
            ids += sent
            if round < 3 {
                broker.stop()
                try await broker.start()
            }
        }
        await client.stop()
        #expect(Set(ids).count == ids.count, "ids: \(ids)")
        #expect(ids.allSatisfy { $0 > 0 })
    }
}
