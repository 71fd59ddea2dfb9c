@testable import BeaconModel
@testable import BeaconSimulation
@testable import BeaconTracking

/// Scenario building blocks for the tracking tests. Geometry: the gateway at the origin, log-distance path loss
/// with n = 2.7 and -59 dBm at 1 m. The test region's boundary is its enter radius of 3 m (mean RSSI -71.9 dBm);
/// its exit radius defaults to 4.5 m (-76.6 dBm). "1 m inside the boundary" is a beacon still at 2 m
/// (-67.1 dBm, 4.8 dB above the enter level); "1 m outside" is a beacon still at 4 m (-75.3 dBm, 3.4 dB below).
enum ScenarioFixtures {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    static let room = RegionRule(name: "office", match: .iBeacon(uuid: uuid), enter: .distance(3))

    /// Occasional multi-second dropouts: every 5 minutes on average, 2-8 s long.
    static let occasionalDropouts = (meanInterval: 300.0, minLength: 2.0, maxLength: 8.0)

    static func beacon(
        _ index: Int, path: [Waypoint], rate: Double = 10, loss: Double = 0.3, sigma: Double = 8,
        dropouts: [Dropout] = [],
        randomDropouts: (meanInterval: Double, minLength: Double, maxLength: Double)? = nil
    ) -> ScenarioBeacon {
        ScenarioBeacon(
            beaconID: "ibeacon:\(uuid):1:\(index)", format: "ibeacon", identifiers: [uuid, "1", String(index)],
            address: BluetoothAddress(rawValue: 0xC0_0000_0000 | UInt64(index)), measuredPower: -59,
            rate: rate, loss: loss, sigma: sigma, path: path, dropouts: dropouts, randomDropouts: randomDropouts)
    }

    static func still(
        _ index: Int, at metres: Double, rate: Double = 10, loss: Double = 0.3, sigma: Double = 8,
        dropouts: [Dropout] = [],
        randomDropouts: (meanInterval: Double, minLength: Double, maxLength: Double)? = nil
    ) -> ScenarioBeacon {
        beacon(
            index, path: [Waypoint(time: 0, x: metres)], rate: rate, loss: loss, sigma: sigma, dropouts: dropouts,
            randomDropouts: randomDropouts)
    }

    static func scenario(
        seed: UInt64, duration: Double, beacons: [ScenarioBeacon], regions: [RegionRule] = [room],
        restarts: [Double] = [], radio: ScenarioRadio = ScenarioRadio(model: .independent)
    ) -> Scenario {
        Scenario(
            name: "test", seed: seed, duration: duration, radio: radio, regions: regions, beacons: beacons,
            restarts: restarts)
    }
}
