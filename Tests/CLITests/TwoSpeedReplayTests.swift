import BeaconModel
import Foundation
import TestSupport
import Testing

/// The region rule's two speeds, end to end: the built binary replays a capture through a real broker. A
/// beacon that comes well inside (20 dB above the enter level) enters in about two seconds by the strong
/// evidence; one that comes just inside (5 dB above, below the 6 dB fast margin) enters by the slow evidence,
/// about 20 s later (issue 30; `balanced`: 30 dB·s beyond a 3.5 dB margin).
@Suite struct TwoSpeedReplayTests {
    static let start = 1_700_000_000.0

    /// Outside (-85 dBm) for 10 s, then at `rssi` for 50 s, at 5 Hz.
    static func approach(minor: Int, rssi: Int) -> [Observation] {
        DaemonTestBed.iBeaconObservations(minor: minor, start: start, duration: 10, interval: 0.2, rssi: -85)
            + DaemonTestBed.iBeaconObservations(
                minor: minor, start: start + 10, duration: 50, interval: 0.2, rssi: rssi)
    }

    @Test func aStrongBeaconEntersInSecondsAndOneAtTheBoundarySlowly() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(DaemonTestBed.officeRegion)
        let capture = try bed.writeCapture(
            "approach.btsnoop", Self.approach(minor: 1, rssi: -50) + Self.approach(minor: 2, rssi: -65))
        let subscriber = try await bed.startSubscriber()
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 120)
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(2_000))")

        /// Seconds from the move inside (10 s into the capture) to the beacon's `enter`.
        func enterDelay(minor: Int) async throws -> Double? {
            let topic = "\(bed.topicBase)/region/office/\(bed.beaconID(minor: minor))"
            try await waitUntil("the enter of minor \(minor)", timeout: 30) {
                subscriber.messages(under: topic).contains { $0.string("event") == "enter" }
            }
            let events = subscriber.messages(under: topic).map { ($0.string("event"), $0.json?["time"]) }
            #expect(events.first?.0 == "state", "first settled outside: \(events)")
            switch events.first(where: { $0.0 == "enter" })?.1 {
            case let .double(time)?: return time - (Self.start + 10)
            case let .int(time)?: return Double(time) - (Self.start + 10)
            default: return nil
            }
        }
        let strong = try #require(try await enterDelay(minor: 1))
        let boundary = try #require(try await enterDelay(minor: 2))
        #expect(strong > 0 && strong < 3, "strong evidence decides in seconds: \(strong) s")
        #expect(boundary > 15 && boundary < 25, "weak evidence near the boundary decides slowly: \(boundary) s")
    }
}
