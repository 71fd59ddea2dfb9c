import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The realistic radio's terms, each checked alone (the others off) on a still or moving beacon.
@Suite(.ownThread) struct RealisticRadioTests {
    static func quiet(_ change: (inout RealisticRadio) -> Void) -> ScenarioRadio {
        var realistic = RealisticRadio(
            shadowingSigma: 0, fadingSigma: 0, channelOffsetSigma: 0,
            blocking: .init(meanInterval: 0), lossBurst: 0, lossBurstShare: 0,
            sensitivityWidth: 0.01, advDelayMax: 0)
        change(&realistic)
        return ScenarioRadio(model: .pessimistic, noiseFloor: -127, realistic: realistic)
    }

    static func reports(_ radio: ScenarioRadio, beacon: ScenarioBeacon, duration: Double, seed: UInt64 = 3)
        -> [Observation]
    {
        ScenarioSimulator(Scenario(seed: seed, duration: duration, radio: radio, regions: [], beacons: [beacon]))
            .observations()
    }

    /// Sample autocorrelation of the RSSI at a lag of `lag` reports.
    static func autocorrelation(_ values: [Double], lag: Int) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        var sum = 0.0
        for index in 0..<(values.count - lag) { sum += (values[index] - mean) * (values[index + lag] - mean) }
        return sum / variance
    }

    @Test func shadowingIsCorrelatedInTime() {
        let radio = Self.quiet {
            $0.shadowingSigma = 4
            $0.shadowingTime = 5
        }
        let beacon = ScenarioBeacon(beaconID: "b", rate: 1, loss: 0, path: [Waypoint(time: 0, x: 2)])
        let values = Self.reports(radio, beacon: beacon, duration: 20_000).map { Double($0.rssi!) }
        let mean = values.reduce(0, +) / Double(values.count)
        let sd = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)).squareRoot()
        #expect(abs(mean - -67.13) < 0.5)
        #expect(abs(sd - 4) < 0.4, "sd \(sd)")
        // exp(-1/5) = 0.82 at 1 s, exp(-4) = 0.02 at 20 s (rounding to whole dBm adds a little independent noise).
        #expect(abs(Self.autocorrelation(values, lag: 1) - 0.82) < 0.06)
        #expect(abs(Self.autocorrelation(values, lag: 20)) < 0.1)
    }

    @Test func shadowingDecorrelatesWithDistanceMoved() {
        // Very slow in time (1 h), 1.5 m in distance; the beacon walks a circle of 5 m radius (constant mean)
        // at about 1.5 m/s, so reports 1 s apart are about 1.5 m apart: correlation about exp(-1) = 0.37.
        let radio = Self.quiet {
            $0.shadowingSigma = 4
            $0.shadowingTime = 3_600
            $0.shadowingDistance = 1.5
        }
        var path: [Waypoint] = []
        for step in 0...2_000 {
            let angle = Double(step) * 0.3
            path.append(
                Waypoint(time: Double(step), x: 5 * cosine(angle), y: 5 * cosine(angle - 1.570_796_326_794_896_6)))
        }
        let beacon = ScenarioBeacon(beaconID: "b", rate: 1, loss: 0, path: path)
        let values = Self.reports(radio, beacon: beacon, duration: 2_000).map { Double($0.rssi!) }
        #expect(abs(Self.autocorrelation(values, lag: 1) - 0.37) < 0.1)
        #expect(abs(Self.autocorrelation(values, lag: 5)) < 0.1)
    }

    @Test func channelOffsetsHoldForADwellAndFadingIsIndependent() {
        let radio = Self.quiet {
            $0.channelOffsetSigma = 3
            $0.fadingSigma = 2
        }
        var withDwell = radio
        withDwell.channelDwell = 10
        let beacon = ScenarioBeacon(beaconID: "b", rate: 10, loss: 0, path: [Waypoint(time: 0, x: 1)])
        let reports = Self.reports(withDwell, beacon: beacon, duration: 300)
        // Per dwell, the mean RSSI is one of three channel levels; within a dwell the spread is the fading.
        var dwellMeans: [Double] = []
        for dwell in 0..<30 {
            let inDwell = reports.filter { Int(($0.timestamp - 1_700_000_000) / 10) == dwell }.map { Double($0.rssi!) }
            dwellMeans.append(inDwell.reduce(0, +) / Double(inDwell.count))
        }
        for (index, mean) in dwellMeans.enumerated() where index >= 3 {
            #expect(abs(mean - dwellMeans[index - 3]) < 1.2, "same channel again after three dwells")
        }
        let levels = dwellMeans.prefix(3).sorted()
        #expect(levels[2] - levels[0] > 0.5, "the three channels differ")
        let values = reports.map { Double($0.rssi!) }
        #expect(Self.autocorrelation(values, lag: 1) > 0.2)
    }

    @Test func lossComesInBurstsWithTheConfiguredMean() {
        let radio = Self.quiet {
            $0.lossBurst = 1
            $0.lossBurstShare = 0.1
        }
        let beacon = ScenarioBeacon(beaconID: "b", rate: 10, loss: 0.3, path: [Waypoint(time: 0, x: 1)])
        let reports = Self.reports(radio, beacon: beacon, duration: 5_000)
        let heard = Double(reports.count) / 50_000
        #expect(abs(heard - 0.7) < 0.02, "heard \(heard)")
        let gaps = zip(reports, reports.dropFirst()).map { $1.timestamp - $0.timestamp }
        let long = Double(gaps.filter { $0 > 1.05 }.count)
        // Independent 22 % loss would almost never lose 10 in a row (0.22^10 ≈ 3e-7 per report); bursts of mean
        // 1 s, 10 % of the time, give about one gap above a second every 20 s.
        #expect(long > 100, "gaps over 1 s: \(long)")
    }

    @Test func bodyBlockingTakesDepthForTensOfSeconds() {
        let radio = Self.quiet {
            $0.blocking = .init(meanInterval: 120, minLength: 10, maxLength: 30, minDepth: 8, maxDepth: 15)
        }
        let beacon = ScenarioBeacon(beaconID: "b", rate: 10, loss: 0, path: [Waypoint(time: 0, x: 1)])
        let reports = Self.reports(radio, beacon: beacon, duration: 3_600)
        let dips = reports.filter { $0.rssi! < -59 }.map { -59 - $0.rssi! }
        #expect(dips.allSatisfy { (8...15).contains($0) })
        let share = Double(dips.count) / Double(reports.count)
        // Mean episode 20 s every 120 + 20 s: about 14 % of the time.
        #expect(share > 0.08 && share < 0.22, "blocked share \(share)")
    }

    @Test func sensitivityCurveAndAdvertisingDelay() {
        let radio = Self.quiet {
            $0.sensitivityWidth = 2
            $0.advDelayMax = 0.01
        }
        var floor = radio
        floor.noiseFloor = -59
        let beacon = ScenarioBeacon(beaconID: "b", rate: 10, loss: 0, path: [Waypoint(time: 0, x: 1)])
        let atFloor = Double(Self.reports(floor, beacon: beacon, duration: 1_000).count) / Double(10_000)
        #expect(abs(atFloor - 0.5) < 0.03, "heard at the 50 % point: \(atFloor)")
        let reports = Self.reports(radio, beacon: beacon, duration: 100)
        let gaps = zip(reports, reports.dropFirst()).map { $1.timestamp - $0.timestamp }
        #expect(gaps.allSatisfy { $0 >= 0.1 - 1e-6 && $0 <= 0.11 + 1e-6 })
        #expect(gaps.contains { $0 > 0.105 } && gaps.contains { $0 < 0.105 })
    }

    @Test func scenarioFilesSetEveryParameter() throws {
        let text = #"""
            {"duration_s": 60, "radio": {"model": "realistic", "shadowing_sigma_db": 5, "shadowing_time_s": 3,
              "shadowing_distance_m": 2, "fading_sigma_db": 2.5, "channel_offset_sigma_db": 4, "channel_dwell_s": 6,
              "loss_burst_s": 0.5, "loss_burst_share": 0.05, "sensitivity_width_db": 3, "adv_delay_max_s": 0.005,
              "body_blocking": {"mean_interval_s": 100, "min_s": 5, "max_s": 20, "min_db": 6, "max_db": 12}},
             "beacons": [{"attenuation_db": 10, "path": [{"t": 0, "x": 5}]}]}
            """#
        let scenario = try Scenario(json: text)
        #expect(
            scenario.radio.realistic
                == RealisticRadio(
                    shadowingSigma: 5, shadowingTime: 3, shadowingDistance: 2, fadingSigma: 2.5, channelOffsetSigma: 4,
                    blocking: .init(meanInterval: 100, minLength: 5, maxLength: 20, minDepth: 6, maxDepth: 12),
                    lossBurst: 0.5, lossBurstShare: 0.05, sensitivityWidth: 3, advDelayMax: 0.005))
        #expect(scenario.radio.channelDwell == 6)
        #expect(scenario.beacons[0].attenuation == 10)
        #expect(try Scenario(json: #"{"duration_s": 1, "beacons": [{"path": [{"t": 0}]}]}"#).radio.model == .measured)
        for (bad, path) in [
            (#""model": "fancy""#, "radio.model"), (#""fading_sigma_db": -1"#, "radio.fading_sigma_db"),
            (#""body_blocking": {"min_s": 9, "max_s": 3}"#, "radio.body_blocking"),
        ] {
            do {
                _ = try Scenario(
                    json: #"{"duration_s": 1, "radio": {"# + bad + #"}, "beacons": [{"path": [{"t": 0}]}]}"#)
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.path == path, "\(error)")
            }
        }
    }
}

/// cos(x) by its Taylor series after range reduction (the core has no C math), for test paths only.
private func cosine(_ x: Double) -> Double {
    let twoPi = 6.283_185_307_179_586
    var r = x - (x / twoPi).rounded(.down) * twoPi
    if r > twoPi / 2 { r -= twoPi }
    var term = 1.0
    var sum = 1.0
    for n in 1...20 {
        term *= -r * r / Double((2 * n - 1) * (2 * n))
        sum += term
    }
    return sum
}
