import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// Tags that report their own motion (`reports_motion`): their reports carry BTHome's `moving` flag from the
/// path, on the same radio streams as the same tags without it, so the region engine's motion weighting
/// (`MotionState`) is scored against the plain engine on identical reports.
@Suite struct MotionReportingTests {
    static let json = """
        {"duration_s": 60, "seed": 3, "beacons": [
          {"name": "carried", "identifiers": ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", 1, 1], "rate_hz": 5,
           "loss": 0, "path": [{"t": 0, "x": 10}, {"t": 20, "x": 10}, {"t": 29, "x": 1}], "reports_motion": true},
          {"name": "plain", "identifiers": ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", 1, 2], "rate_hz": 5,
           "loss": 0, "path": [{"t": 0, "x": 10}, {"t": 20, "x": 10}, {"t": 29, "x": 1}]}
        ]}
        """

    @Test func aMotionReportingTagSaysMovingOnlyWhileItsPathMovesIt() throws {
        let scenario = try Scenario(json: Self.json)
        let observations = ScenarioSimulator(scenario).observations()
        let carried = observations.filter { $0.beaconID.hasSuffix(":1:1") }
        let plain = observations.filter { $0.beaconID.hasSuffix(":1:2") }
        #expect(carried.count > 200 && plain.count > 200)
        for observation in carried {
            let t = observation.timestamp - scenario.startTime
            #expect(observation.fields == ["moving": .bool(t >= 20 && t < 29)], "at t = \(t)")
        }
        #expect(carried.contains { $0.fields["moving"] == .bool(true) })
        #expect(plain.allSatisfy { $0.fields.isEmpty })
        // The same radio: the flag draws nothing from the beacon's random stream.
        let without = try Scenario(json: Self.json.replacingOccurrences(of: #", "reports_motion": true"#, with: ""))
        let reference = ScenarioSimulator(without).observations().filter { $0.beaconID.hasSuffix(":1:1") }
        #expect(reference.map(\.rssi) == carried.map(\.rssi))
        #expect(reference.map(\.timestamp) == carried.map(\.timestamp))
    }

    @Test func aStillTagAndARestBetweenTwoSpotsAreNotMoving() {
        let beacon = ScenarioBeacon(
            beaconID: "b",
            path: [
                Waypoint(time: 0, x: 5), Waypoint(time: 10, x: 5), Waypoint(time: 20, x: 2), Waypoint(time: 30, x: 2),
            ])
        #expect(!beacon.isMoving(at: 5))
        #expect(beacon.isMoving(at: 10) && beacon.isMoving(at: 19.9))
        #expect(!beacon.isMoving(at: 25))
        #expect(!beacon.isMoving(at: 40))
        #expect(!ScenarioBeacon(beaconID: "s", path: [Waypoint(time: 0, x: 1)]).isMoving(at: 0))
    }

    @Test func aFlagThatIsNotABooleanIsNamed() {
        let text = #"{"duration_s": 1, "beacons": [{"path": [{"t": 0}], "reports_motion": "yes"}]}"#
        #expect {
            try Scenario(json: text)
        } throws: { error in
            "\(error)".contains("beacons[0].reports_motion")
        }
    }
}
