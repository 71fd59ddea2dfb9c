import Testing

@testable import BeaconEvents
@testable import BeaconModel

@Suite struct EventEncoderTests {
    static let beacon = BeaconSnapshot(
        beaconID: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7", format: "ibeacon",
        identifiers: ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1", "7"],
        address: BluetoothAddress(string: "C0:FF:EE:00:00:07")!,
        name: "keys", rssi: -67, smoothedRSSI: -66.04, distance: 2.3456, measuredPower: -59, reportRate: 1.234,
        lastSeen: 1_700_000_000.5, fields: ["temperature_c": .double(21.5), "battery_mv": .int(2950)])

    func encoder(_ settings: TopicSettings = TopicSettings()) -> EventEncoder {
        EventEncoder(
            layout: TopicLayout(settings: settings, gatewayID: "gw1"), sequences: SequenceBlock(first: 41, end: 50))
    }

    @Test func regionEventPayloadIsTheDocumentedJSON() throws {
        var encoder = encoder()
        let event = EngineEvent.region(
            RegionEvent(
                kind: .enter, time: 1_700_000_001.25, region: "kitchen",
                beaconID: Self.beacon.beaconID, state: .inside, since: 1_700_000_000, beacon: nil))
        let envelopes = try encoder.encode(event)
        #expect(envelopes.count == 1)
        let envelope = envelopes[0]
        #expect(envelope.id == "gw1-41")
        #expect(envelope.sequence == 41)
        #expect(envelope.kind == .region)
        #expect(envelope.topic == "beaconbridge/gw1/region/kitchen/ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7")
        #expect(envelope.qos == 1 && envelope.retain)
        #expect(envelope.captureTime == 1_700_000_001.25)
        #expect(
            envelope.payload
                == #"{"schema":"1","id":"gw1-41","gateway":"gw1","seq":41,"kind":"region","time":1700000001.25,"event":"enter","region":"kitchen","beacon_id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7","state":"inside","since":1700000000,"beacon":null}"#
        )
    }

    @Test func sightingCarriesTheRoundedBeaconBlock() throws {
        var encoder = encoder()
        let envelope = try encoder.encode(.sighting(SightingEvent(time: 1_700_000_000.5, beacon: Self.beacon)))[0]
        #expect(envelope.qos == 0 && !envelope.retain)
        let json = try JSONValue(parsing: envelope.payload)
        #expect(json["kind"] == .string("sighting"))
        #expect(json["distance"] == .double(2.35))
        #expect(json["rssi_smoothed"] == .int(-66))  // integral numbers are written without a fraction
        #expect(json["report_rate"] == .double(1.23))
        #expect(json["mac"] == .string("C0:FF:EE:00:00:07"))
        #expect(json["fields"] == .object([("battery_mv", .int(2950)), ("temperature_c", .double(21.5))]))
    }

    @Test func presenceAndTelemetryUseTheirTopics() throws {
        var encoder = encoder()
        let presence = try encoder.encode(.presence(PresenceEvent(time: 5, state: .away, beacon: Self.beacon)))[0]
        #expect(presence.topic == "beaconbridge/gw1/presence/\(Self.beacon.beaconID)")
        #expect(try JSONValue(parsing: presence.payload)["state"] == .string("away"))
        let telemetry = try encoder.encode(GatewayTelemetry(time: 9, uptime: 3.25, counters: [("published", 4)]))
        #expect(telemetry.topic == "beaconbridge/gw1/telemetry")
        #expect(telemetry.retain && telemetry.qos == 0)
        #expect(try JSONValue(parsing: telemetry.payload)["counters"] == .object([("published", .int(4))]))
    }

    @Test func espresenseModeAddsARenderingWhenADistanceIsKnown() throws {
        var settings = TopicSettings()
        settings.espresense = ESPresenseSettings(enabled: true, room: "office")
        var encoder = encoder(settings)
        let envelopes = try encoder.encode(.sighting(SightingEvent(time: 1, beacon: Self.beacon)))
        #expect(envelopes.map(\.kind) == [.sighting, .espresense])
        #expect(envelopes.map(\.sequence) == [41, 42])
        #expect(envelopes[1].topic == "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7/office")
        var noDistance = Self.beacon
        noDistance.distance = nil
        #expect(try encoder.encode(.sighting(SightingEvent(time: 1, beacon: noDistance))).count == 1)
    }

    @Test func configuredQoSAndRetainApply() throws {
        var settings = TopicSettings()
        settings.delivery[.sighting] = DeliveryPolicy(qos: 1, retain: true)
        var encoder = encoder(settings)
        let envelope = try encoder.encode(.sighting(SightingEvent(time: 1, beacon: Self.beacon)))[0]
        #expect(envelope.qos == 1 && envelope.retain)
    }

    @Test func exhaustedSequencesAreReportedNotReused() throws {
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: "g"),
            sequences: SequenceBlock(first: 1, end: 2))
        #expect(encoder.needsSequences)
        _ = try encoder.encode(.presence(PresenceEvent(time: 1, state: .seen, beacon: Self.beacon)))
        #expect(throws: EventEncoderError.sequencesExhausted) {
            try encoder.encode(.presence(PresenceEvent(time: 1, state: .seen, beacon: Self.beacon)))
        }
        #expect(encoder.sequencesToReserve(forEvents: 3) == 1024)
        encoder.refill(SequenceBlock(first: 100, end: 200))
        #expect(encoder.sequencesToReserve(forEvents: 50) == 0)
        #expect(encoder.sequencesToReserve(forEvents: 600) == 1200)
        #expect(
            try encoder.encode(.presence(PresenceEvent(time: 1, state: .seen, beacon: Self.beacon)))[0].sequence == 100)
    }
}
