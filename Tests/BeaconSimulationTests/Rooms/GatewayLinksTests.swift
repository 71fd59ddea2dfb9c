import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The gateways' own links in the rooms simulator and self-calibration scored on them (docs/rooms.md,
/// "Self-calibration"; docs/scenarios.md, "Gateway links").
@Suite(.ownThread) struct GatewayLinksTests {
    /// Two 5 × 4 m rooms side by side with no wall, gw-a at (1, 2) and gw-b at (9, 2) (8 m apart), offsets and
    /// the `gateway_links` block spliced in; one tag at rest in a.
    static func scenario(offsetA: Int, offsetB: Int, links: String, radio: String = quiet, duration: Int = 900)
        throws -> RoomScenario
    {
        try RoomScenario(
            json: """
                {"kind": "rooms", "name": "links", "seed": 3, "duration_s": \(duration), "radio": \(radio),
                 "rooms": [{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}],
                 "gateways": [{"id": "gw-a", "x": 1, "y": 2, "receiver_offset_db": \(offsetA)},
                              {"id": "gw-b", "x": 9, "y": 2, "receiver_offset_db": \(offsetB)}],
                 "gateway_links": \(links),
                 "people": [{"id": "tag", "rate_hz": 1, "loss": 0, "path": [{"t": 0, "x": 3.5, "y": 2}]}]}
                """)
    }

    static let quiet = """
        {"model": "pessimistic", "shadowing_sigma_db": 0, "fading_sigma_db": 0, "channel_offset_sigma_db": 0,
         "body_blocking": {"mean_interval_s": 0}}
        """

    static let bare = """
        {"identity_loss": 0, "transmit_offset_sigma_db": 0, "reciprocal_gain_sigma_db": 0, "placement_sigma_db": 0,
         "asymmetry_sigma_db": 0}
        """

    @Test func eachGatewayHearsTheOthersIdentityBeaconThroughTheLinkWithItsReceiveOffset() throws {
        let run = RoomScenarioRun(try Self.scenario(offsetA: 6, offsetB: -2, links: Self.bare))
        let reports = run.simulator.identityReports()
        let ab = reports.filter { $0.receiver == "gw-a" && $0.transmitter == "gw-b" }.map(\.rssi)
        let ba = reports.filter { $0.receiver == "gw-b" && $0.transmitter == "gw-a" }.map(\.rssi)
        // 1 Hz (plus advDelay) for 900 s, nothing lost: -59 - 27·log10(8) = -83.384, +6 at gw-a, -2 at gw-b,
        // whole dB.
        #expect(ab.count >= 880 && ba.count >= 880)
        #expect(Set(ab) == [-77])
        #expect(Set(ba) == [-85])
        // Self-calibration recovers the 8 dB difference (centred: +4 and -4) but for its priors' shrinkage (one
        // pair of 2 dB expected asymmetry against receive offsets of 5 dB spread: by hand 7.15 dB, 0.43 dB off
        // each), and the calibrated rule is right.
        let world = run.world()
        let calibration = world.calibration
        #expect(calibration.finalErrorMax > 0.3 && calibration.finalErrorMax < 0.6)
        #expect(abs(calibration.uncalibratedErrorRMS - 4) < 1e-9)
        #expect((calibration.convergeTime ?? .infinity) <= 120)
        let rows = Dictionary(uniqueKeysWithValues: run.run(in: world).rules.map { ($0.name, $0) })
        #expect(try #require(rows["calibrated"]).wrongShare < 0.05)
        #expect(try #require(rows["beaconbridge"]).wrongShare < 0.05)
        // The tag stands 2.5 m from gw-a, 5.5 m from gw-b: -69.74 + 6 against -78.99 - 2, so a wins uncalibrated too;
        // the uncalibrated row is only scored here, not judged.
        #expect(rows["uncalibrated"] != nil && rows["nearest-uncalibrated"] != nil)
    }

    @Test func theReciprocalGainIsInvisibleToPairsAndIsTheRemainingError() throws {
        let links = """
            {"identity_loss": 0, "transmit_offset_sigma_db": 0, "reciprocal_gain_sigma_db": 4,
             "placement_sigma_db": 0, "asymmetry_sigma_db": 0}
            """
        let scenario = try Self.scenario(offsetA: 0, offsetB: 0, links: links).realized()
        let draws = try #require(scenario.gatewayDraws)
        let gains = RoomCalibrationRun.centred(draws.gain)
        #expect(abs(gains[0]) > 0.1)
        let calibration = RoomScenarioRun(scenario).world().calibration
        // Pairs see g - t = 0 on both gateways: the estimate stays 0, the error is the gain itself.
        #expect(calibration.gateways.allSatisfy { abs($0.estimate) < 0.5 })
        #expect(abs(calibration.finalErrorRMS - RoomCalibrationRun.rms(gains)) < 0.5)
    }

    @Test func realizingIsIdempotentAndTheConfiguredRowKnowsTheDrawnTerms() throws {
        let scenario = try Self.scenario(offsetA: 3, offsetB: 0, links: #"{"variant": "pessimistic"}"#)
        let once = scenario.realized()
        let twice = once.realized()
        #expect(once.plan == twice.plan && once.arbiter == twice.arbiter)
        let draws = try #require(once.gatewayDraws)
        for (index, gateway) in once.plan.gateways.enumerated() {
            #expect(gateway.receiverOffset == draws.effectiveReceive[index])
            #expect(once.arbiter.receiverOffsets[gateway.id] == draws.effectiveReceive[index])
        }
        #expect(scenario.gatewayLinks.variant == .pessimistic && scenario.gatewayLinks.receiveOffsetSigma == 5)
    }

    @Test(arguments: [
        (#"{"variant": "optimistic"}"#, "gateway_links.variant"),
        (#"{"identity_rate_hz": 0}"#, "gateway_links.identity_rate_hz"),
        (#"{"asymmetry_sigma_db": -1}"#, "gateway_links.asymmetry_sigma_db"),
        (#"{"color": 1}"#, "gateway_links.color"),
    ])
    func badGatewayLinkKeysNameTheirPath(links: String, path: String) {
        do {
            _ = try Self.scenario(offsetA: 0, offsetB: 0, links: links)
            Issue.record("accepted \(links)")
        } catch let error as ScenarioError { #expect(error.path == path) } catch { Issue.record("\(error)") }
    }
}
