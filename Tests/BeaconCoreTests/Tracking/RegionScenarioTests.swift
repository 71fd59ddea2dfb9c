import Testing
@testable import BeaconCore

/// The must-show behaviours, over simulated scenarios with the default settings (geometry in
/// `ScenarioFixtures`: boundary = the 3 m enter radius).
@Suite struct RegionScenarioTests {
    /// Report rates and losses across the simulator's range, all with the worst shadowing (8 dB).
    static let radioCases: [(rate: Double, loss: Double)] = [(1, 0.5), (2, 0.2), (5, 0.3), (10, 0.2), (10, 0.5)]

    @Test(arguments: [UInt64(1), 2, 3])
    func stillBeaconOneMetreFromTheBoundaryNeverFlapsInAnHour(seed: UInt64) {
        var beacons: [ScenarioBeacon] = []
        for (index, radio) in Self.radioCases.enumerated() {
            beacons.append(ScenarioFixtures.still(10 + index, at: 2, rate: radio.rate, loss: radio.loss))
            beacons.append(ScenarioFixtures.still(20 + index, at: 4, rate: radio.rate, loss: radio.loss))
        }
        let run = ScenarioRun(ScenarioFixtures.scenario(seed: seed, duration: 3_600, beacons: beacons))
        let summary = run.run()
        for pair in summary.pairs {
            #expect(pair.falseTransitions == 0, "\(pair.beaconID): \(pair.falseTransitions) false transitions")
            #expect(pair.missed == 0, "\(pair.beaconID) never reached its state")
        }
        // The inside beacons enter once at the start (truth: inside from t = 0); nobody exits.
        #expect(summary.events.enter == Self.radioCases.count)
        #expect(summary.events.exit == 0)
        #expect(summary.flaps == 0)
    }
}
