import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The measured radio (issue 30): its reports have the statistics of the public traces the field notes measured
/// ("Radio in real rooms"), and its constant offsets behave as constants. Seeded, so every run is the same.
@Suite(.ownThread) struct MeasuredRadioTests {
    typealias R = RealisticRadioTests

    static func radio(_ change: (inout RealisticRadio) -> Void = { _ in }) -> ScenarioRadio {
        var measured = RealisticRadio.measured
        measured.blocking.meanInterval = 0
        change(&measured)
        return ScenarioRadio(model: .measured, noiseFloor: -127)
            .with(measured)
    }

    /// 40 still beacons at 2 m, 10 Hz, no loss, 300 s each: the standard deviation around each beacon's own
    /// mean (pooled) and the autocorrelation at `lags` reports (averaged over beacons).
    static func stillStatistics(_ radio: ScenarioRadio, lags: [Int]) -> (sd: Double, correlations: [Double]) {
        let beacons = (0..<40).map { index in
            ScenarioBeacon(beaconID: "b\(index)", rate: 10, loss: 0, path: [Waypoint(time: 0, x: 2)])
        }
        let reports = ScenarioSimulator(Scenario(seed: 7, duration: 300, radio: radio, regions: [], beacons: beacons))
            .observations()
        var series: [String: [Double]] = [:]
        for report in reports { series[report.beaconID, default: []].append(Double(report.rssi!)) }
        var squares = 0.0
        var count = 0.0
        var correlations = Array(repeating: 0.0, count: lags.count)
        for values in series.values {
            let mean = values.reduce(0, +) / Double(values.count)
            squares += values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
            count += Double(values.count)
            for (index, lag) in lags.enumerated() {
                correlations[index] += R.autocorrelation(values, lag: lag) / Double(series.count)
            }
        }
        return ((squares / count).squareRoot(), correlations)
    }

    @Test func mixedChannelsMatchTheMeasuredSpreadAndCorrelation() {
        // No placement or posture offset (constants around each beacon's own mean change nothing here).
        // Expected from the model's terms: variance 3.3² + 1.65² + 2.9² × 2/3 (three channel means around their
        // own mean) + 1/12 (whole dBm) ≈ 19.3, sd ≈ 4.4 dB (the traces: 4.9). The channel means add no
        // correlation (pairs on the same channel share theirs, pairs on different ones differ by theirs: the
        // two cancel), so the correlation is a third (the share of pairs on one channel) of the shadowing's:
        // 10.9 × e^−0.1/2.1 / 3 / 19.3 ≈ 0.18 at 0.1 s (the traces: 0.27), 10.9 × e^−1/2.1 / 3 / 19.3 ≈ 0.12
        // at 1 s (0.13), 0.02 at 5 s (~0).
        let radio = Self.radio {
            $0.placementSigma = 0
            $0.postureSigma = 0
        }
        let (sd, correlations) = Self.stillStatistics(radio, lags: [1, 10, 50])
        #expect(abs(sd - 4.4) < 0.4, "sd \(sd)")
        #expect(abs(correlations[0] - 0.18) < 0.05, "0.1 s: \(correlations[0])")
        #expect(abs(correlations[1] - 0.12) < 0.05, "1 s: \(correlations[1])")
        #expect(abs(correlations[2] - 0.02) < 0.05, "5 s: \(correlations[2])")
        // One channel alone (no offsets, no mixing): 80 % of its variance correlated with T = 2.1 s, so
        // 0.8 × e^−1/2.1 ≈ 0.50 at 1 s (the traces: 0.43), 0.8 × e^−5/2.1 ≈ 0.07 at 5 s (~0).
        let single = Self.radio {
            $0.placementSigma = 0
            $0.postureSigma = 0
            $0.channelOffsetSigma = 0
            $0.channelMixing = false
        }
        let (singleSD, singleCorrelations) = Self.stillStatistics(single, lags: [10, 50])
        #expect(abs(singleSD - 3.7) < 0.4, "sd \(singleSD)")
        #expect(abs(singleCorrelations[0] - 0.50) < 0.07, "1 s: \(singleCorrelations[0])")
        #expect(abs(singleCorrelations[1] - 0.07) < 0.07, "5 s: \(singleCorrelations[1])")
    }

    @Test func placementIsAConstantPerLink() {
        // Over 300 still beacons (each its own stream), the mean of each beacon's reports differs from the
        // log-distance mean by its placement offset: spread about 4.5 dB, and constant for the beacon's life.
        let radio = Self.radio {
            $0.postureSigma = 0
            $0.fadingSigma = 0
            $0.shadowingSigma = 0
            $0.channelOffsetSigma = 0
        }
        let beacons = (0..<300).map { index in
            ScenarioBeacon(
                beaconID: "b\(index)", rate: 1, loss: 0, path: [Waypoint(time: 0, x: 2)])
        }
        let reports = ScenarioSimulator(
            Scenario(seed: 5, duration: 20, radio: radio, regions: [], beacons: beacons)
        ).observations()
        var byBeacon: [String: [Int]] = [:]
        for report in reports { byBeacon[report.beaconID, default: []].append(report.rssi!) }
        #expect(byBeacon.count == 300)
        #expect(byBeacon.values.allSatisfy { Set($0).count == 1 }, "one level per link")
        let offsets = byBeacon.values.map { Double($0[0]) - -67.13 }
        let mean = offsets.reduce(0, +) / Double(offsets.count)
        let sd = (offsets.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(offsets.count)).squareRoot()
        #expect(abs(mean) < 0.8 && abs(sd - 4.5) < 0.6, "mean \(mean) sd \(sd)")
    }

    @Test func postureChangesAtWaypointsOnly() {
        let radio = Self.radio {
            $0.placementSigma = 0
            $0.fadingSigma = 0
            $0.shadowingSigma = 0
            $0.channelOffsetSigma = 0
        }
        // Still at 2 m throughout, three postures: before 100 s, 100-200 s (a "walk" that goes nowhere), after.
        let beacon = ScenarioBeacon(
            beaconID: "b", rate: 1, loss: 0,
            path: [Waypoint(time: 0, x: 2), Waypoint(time: 100, x: 2), Waypoint(time: 200, x: 2)])
        let reports = R.reports(radio, beacon: beacon, duration: 300, seed: 11)
        let parts = [0.0..<100, 100.0..<200, 200.0..<300].map { range in
            Set(reports.filter { range.contains($0.timestamp - 1_700_000_000) }.map(\.rssi!))
        }
        #expect(parts.allSatisfy { $0.count == 1 }, "\(parts)")
        #expect(Set(parts.compactMap(\.first)).count > 1, "postures differ: \(parts)")
    }

    @Test func lossComesInShortBursts() {
        // 15 % loss (per-slot reception 0.85) at the traces' 453 ms spacing: windows of three missed slots about
        // 1.06 % of the time (independent loss: 0.34 %), and no gap anywhere near a minute.
        let radio = Self.radio {
            $0.placementSigma = 0
            $0.postureSigma = 0
            $0.advDelayMax = 0
        }
        let beacon = ScenarioBeacon(beaconID: "b", rate: 1 / 0.453, loss: 0.15, path: [Waypoint(time: 0, x: 1)])
        let duration = 100_000.0
        let times = R.reports(radio, beacon: beacon, duration: duration).map { $0.timestamp - 1_700_000_000 }
        let slots = Int(duration / 0.453)
        var heard = Array(repeating: false, count: slots + 1)
        for time in times { heard[min(Int((time / 0.453).rounded(.down)), slots)] = true }
        let received = Double(heard.filter { $0 }.count) / Double(slots)
        #expect(abs(received - 0.85) < 0.01, "reception \(received)")
        var windows = 0
        for index in 0..<(slots - 2) where !heard[index] && !heard[index + 1] && !heard[index + 2] { windows += 1 }
        let share = Double(windows) / Double(slots - 2)
        #expect(share > 0.0075 && share < 0.014, "three missed in a row: \(share)")
        let longest = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
        #expect(longest < 15, "longest gap \(longest) s")
    }

    @Test func pessimisticVariantIsTheModelBeforeIssue30() throws {
        #expect(RealisticRadio.pessimistic == RealisticRadio())
        #expect(ScenarioRadio(model: .pessimistic).realistic == .pessimistic)
        #expect(ScenarioRadio().realistic == .measured)
        let text =
            #"{"duration_s": 1, "radio": {"model": "independent", "sigma_db": 8}, "beacons": [{"path": [{"t": 0}]}]}"#
        #expect(try Scenario(json: text).radio.model == .independent)
        let forced = try Scenario(json: text, radioModel: .pessimistic)
        #expect(forced.radio.model == .pessimistic && forced.radio.realistic == .pessimistic)
        let tweaked = try Scenario(
            json:
                #"{"duration_s": 1, "radio": {"posture_sigma_db": 0, "channel_mixing": false}, "beacons": [{"path": [{"t": 0}]}]}"#,
            radioModel: .measured)
        #expect(tweaked.radio.realistic.postureSigma == 0 && !tweaked.radio.realistic.channelMixing)
        #expect(tweaked.radio.realistic.shadowingTime == 2.1)
    }
}

extension ScenarioRadio {
    fileprivate func with(_ realistic: RealisticRadio) -> ScenarioRadio {
        var copy = self
        copy.realistic = realistic
        return copy
    }
}
