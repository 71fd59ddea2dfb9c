import Testing

@testable import BeaconFormats
@testable import BeaconModel

/// Button presses (BTHome events) reach the sighting topic once each: a sighting for the report that carries a new
/// event, none of the later sightings carrying it again, a repeated advertisement (same packet id) not a second press.
@Suite struct SensorEventTrackingTests {
    static let address = BluetoothAddress(rawValue: 0x54_48E6_8F80_A5)

    func report(at seconds: Double, _ fields: [String: FieldValue]) -> Observation {
        Observation(
            timestamp: EngineFixtures.t0 + seconds, beaconID: "bthome:54:48:E6:8F:80:A5", format: "bthome",
            identifiers: [], address: Self.address, rssi: -60, measuredPower: nil, fields: fields)
    }

    @Test func eachPressIsOneSightingAndIsNotCarriedForward() {
        var engine = EngineFixtures.engine(regions: [])  // sighting interval 5 s (the default)
        var sightings: [SightingEvent] = []
        let reports: [(Double, [String: FieldValue])] = [
            (0.0, ["packet_id": .int(1), "battery_pct": .int(90)]),
            (1.0, ["packet_id": .int(2), "battery_pct": .int(90), "button": .string("press")]),
            // the same advertisement again:
            (1.1, ["packet_id": .int(2), "battery_pct": .int(90), "button": .string("press")]),
            (1.2, ["packet_id": .int(2), "battery_pct": .int(90), "button": .string("press")]),
            (2.0, ["packet_id": .int(3), "battery_pct": .int(90), "button": .string("double_press")]),
            (7.0, ["packet_id": .int(4), "battery_pct": .int(89)]),
            (13.0, ["packet_id": .int(5), "battery_pct": .int(89)]),
        ]
        for (time, fields) in reports {
            sightings += EngineFixtures.sightings(engine.process(report(at: time, fields)))
        }
        let times = sightings.map { $0.time - EngineFixtures.t0 }
        // 0 s (first), 1 s and 2 s (new events, inside the 5 s interval), 7 s and 13 s (interval).
        #expect(times == [0, 1, 2, 7, 13], "\(times)")
        #expect(
            sightings.map { $0.beacon.fields["button"] } == [nil, .string("press"), .string("double_press"), nil, nil])
        // The readings stay.
        #expect(sightings.last?.beacon.fields["battery_pct"] == .int(89))
    }

    @Test func eventFieldNamesCoverNumberedButtonsAndCompanions() throws {
        let events = try #require(SensorEventFields.names(of: "bthome"))
        for name in ["button", "button_2", "dimmer", "dimmer_steps", "dimmer_steps_1", "command", "command_args"] {
            #expect(SensorEventFields.isEventField(name, events), "\(name)")
        }
        for name in ["battery_pct", "buttons", "temperature_c", "packet_id"] {
            #expect(!SensorEventFields.isEventField(name, events), "\(name)")
        }
        #expect(SensorEventFields.names(of: "ibeacon") == nil)
        #expect(SensorEventFields.names(of: "govee") == nil)
    }
}
