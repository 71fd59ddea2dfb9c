import BeaconEvents
import BeaconModel
import BeaconRuntime
import Foundation
import MQTTPublisher
import TestSupport
import Testing

/// ESPresense mode as Home Assistant's `mqtt_room` consumes it: subscribe `espresense/devices/<id>/+`, take
/// the room from the last topic level, require a string `id` and a numeric `distance`.
@Suite(.serialized) struct ESPresenseTests {
    struct RoomReading: Equatable {
        var id: String
        var room: String
        var distance: Double
    }

    /// mqtt_room's message handling: nil when it would reject the message.
    static func mqttRoomReading(topic: String, payload: String) -> RoomReading? {
        guard let json = try? JSONValue(parsing: payload), case let .string(id)? = json["id"],
            let distance = json["distance"]?.number, let room = topic.split(separator: "/").last
        else { return nil }
        return RoomReading(id: id, room: String(room), distance: distance)
    }

    /// A device resolved through its key: id `irk:<name>` (never the key), valid by the schema, and mqtt_room
    /// takes it.
    @Test func resolvedPrivateDeviceKeepsItsNameAsESPresenseID() throws {
        let snapshot = BeaconSnapshot(
            beaconID: "irk:alice-phone", format: "irk", identifiers: ["alice-phone"],
            address: BluetoothAddress(string: "4A:1B:2C:A4:90:BB")!, name: nil, rssi: -61,
            smoothedRSSI: -60, distance: 1.4, measuredPower: -62, reportRate: 1, lastSeen: 10,
            fields: [:])
        let payload = ESPresenseMapping.payload(for: snapshot)
        #expect(payload["id"] == .string("irk:alice-phone"))
        #expect(try JSONSchemaValidator.forKind("espresense").validate(payload).isEmpty)
        #expect(
            Self.mqttRoomReading(topic: "espresense/devices/irk:alice-phone/hall", payload: payload.serialized)
                == RoomReading(id: "irk:alice-phone", room: "hall", distance: 1.4))
    }

    @Test func mqttRoomRulesAcceptEveryESPresenseMessage() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        var topics = TopicSettings()
        topics.espresense = ESPresenseSettings(enabled: true, room: "living_room")
        #expect(topics.validate().isEmpty)
        let layout = TopicLayout(settings: topics, gatewayID: "lr")
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["espresense/#"])
        try await subscriber.start()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: layout),
            outbox: nil)
        var encoder = SequencedEncoder(layout: layout, database: nil)
        let now = SystemClock.realtime()
        var eddystone = EventFactory.beacon(2, time: now, distance: 3.456)
        eddystone.format = "eddystone-uid"
        eddystone.identifiers = ["0x00112233445566778899", "0xAABBCCDDEEFF"]
        var device = EventFactory.beacon(3, time: now, distance: 7)
        device.format = "device"
        device.identifiers = []
        let noDistance = EventFactory.beacon(4, time: now, distance: nil)
        let sightings = [EventFactory.beacon(1, time: now), eddystone, device, noDistance]
            .map { EngineEvent.sighting(SightingEvent(time: now, beacon: $0)) }

        try await withRunningPublisher(publisher) {
            try await waitUntil("connected", timeout: 60) { publisher.counters.connected }
            publisher.publish(try await encoder.encode(sightings))
            try await waitUntil("ESPresense messages", timeout: 60) {
                subscriber.messages(under: "espresense/devices/").count >= 3
            }
        }
        try await waitUntil("room status offline after stop", timeout: 60) {
            subscriber.messages(under: "espresense/rooms/").last?.payload == "offline"
        }
        await subscriber.stop()

        let statuses = subscriber.messages(under: "espresense/rooms/living_room/status").map(\.payload)
        #expect(statuses == ["online", "offline"])
        let schema = try JSONSchemaValidator.forKind("espresense")
        let devices = subscriber.messages(under: "espresense/devices/")
        var readings: [RoomReading] = []
        for message in devices {
            #expect(schema.validate(try #require(message.json)).isEmpty, "\(message.payload)")
            let reading = try #require(ESPresenseTests.mqttRoomReading(topic: message.topic, payload: message.payload))
            // The id level of the topic is the payload's id.
            #expect(message.topic == "espresense/devices/\(reading.id)/living_room")
            readings.append(reading)
        }
        #expect(
            readings == [
                RoomReading(
                    id: "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1", room: "living_room", distance: 1.25),
                RoomReading(id: "eddy:00112233445566778899-aabbccddeeff", room: "living_room", distance: 3.46),
                RoomReading(id: "known:c0ffee000003", room: "living_room", distance: 7),
            ])
    }
}
