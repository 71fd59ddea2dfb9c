import BeaconSimulation
import Testing

@testable import BeaconTracking

@Suite struct FilterTests {
    @Test func kalmanStartsAtTheFirstReportAndMovesByTheGain() {
        var filter = KalmanRSSIFilter()
        #expect(filter.add(-70) == -70)
        // Covariance 4 + 0.008 prior, gain 4.008 / 8.008.
        let gain = 4.008 / 8.008
        #expect(abs(filter.add(-60) - (-70 + gain * 10)) < 1e-12)
    }

    @Test func kalmanSettlesNearTheMeanAndKeepsFractions() {
        var filter = KalmanRSSIFilter()
        for index in 0..<500 { filter.add(index.isMultiple(of: 2) ? -70 : -71) }
        let estimate = filter.estimate!
        #expect(abs(estimate - -70.5) < 0.2)
        #expect(estimate != estimate.rounded(), "state is floating point, not truncated to whole dBm")
    }

    @Test func runningAverageTrimsLikeABL() {
        var filter = RunningAverageRSSIFilter(window: 20)
        // 10 samples: drop 10/10+1 = 2 from each end, mean of the middle 6.
        let samples = [-90, -50, -70, -71, -72, -73, -74, -75, -40, -99]
        var result = 0.0
        for (index, rssi) in samples.enumerated() { result = filter.add(rssi, at: Double(index)) }
        // Sorted: -99 -90 | -75 -74 -73 -72 -71 -70 | -50 -40
        #expect(result == Double(-75 - 74 - 73 - 72 - 71 - 70) / 6)
    }

    @Test func runningAverageOfTwoSamplesIsTheirMean() {
        var filter = RunningAverageRSSIFilter()
        filter.add(-60, at: 0)
        #expect(filter.add(-70, at: 1) == -65)
    }

    @Test func runningAverageForgetsSamplesOutsideTheWindow() {
        var filter = RunningAverageRSSIFilter(window: 20)
        for second in 0..<10 { filter.add(-90, at: Double(second)) }
        // At t = 40 everything earlier than t = 20 is gone.
        #expect(filter.add(-60, at: 40) == -60)
        #expect(filter.sampleCount == 1)
    }

    @Test func windowHistoryIsBoundedByMaxSamples() {
        var filter = RunningAverageRSSIFilter(window: 600, maxSamples: 16)
        for index in 0..<1_000 { filter.add(-60 - index % 7, at: Double(index) * 0.01) }
        #expect(filter.sampleCount == 16)
    }

    @Test func medianIQRIgnoresOutliersOutsideTheFence() {
        var filter = MedianIQRRSSIFilter(window: 15, fenceK: 1.5)
        let samples = [-70, -71, -69, -70, -72, -68, -70, -30, -71, -69, -110]
        var result = 0.0
        for (index, rssi) in samples.enumerated() { result = filter.add(rssi, at: Double(index) * 0.5) }
        let kept = samples.filter { $0 > -100 && $0 < -40 }
        #expect(abs(result - Double(kept.reduce(0, +)) / Double(kept.count)) < 1e-9)
    }

    @Test func medianIQROfIdenticalSamplesIsThatValue() {
        var filter = MedianIQRRSSIFilter()
        for index in 0..<5 { filter.add(-64, at: Double(index)) }
        #expect(filter.add(-64, at: 5) == -64)
    }

    /// The per-beacon state gives the same values as the stand-alone filters.
    @Test(arguments: [FilterSettings.default, .runningAverage, .medianIQR])
    func perBeaconStateMatchesTheStandAloneFilter(settings: FilterSettings) {
        var state = RSSIFilter(settings)
        var kalman = KalmanRSSIFilter()
        var average = RunningAverageRSSIFilter()
        var fenced = MedianIQRRSSIFilter()
        var random = SimulationRandom(seed: 3)
        for index in 0..<500 {
            let rssi = -70 + Int(random.next() % 21) - 10
            let time = Double(index) * 0.3
            let expected: Double
            switch settings.kind {
            case .kalman: expected = kalman.add(Double(rssi))
            case .runningAverage: expected = average.add(rssi, at: time)
            case .medianIQR: expected = fenced.add(rssi, at: time)
            }
            #expect(state.add(rssi, at: time, settings: settings) == expected)
        }
    }

    @Test func ringKeepsTimesAndValuesAcrossARebase() {
        var ring = RSSISampleRing(capacity: 4)
        // A beacon heard every 10 s for 50 hours never empties its 20 s window, so the 24-bit tick offset
        // (46.6 h) must be rebased along the way instead of overflowing.
        var t = 1_000.0
        for step in 0..<18_000 {
            ring.removeOlder(than: t - 20)
            ring.append(rssi: -40 - step % 50, at: t)
            t += 10
        }
        t -= 10
        #expect(ring.count == 3)
        #expect(ring.rssi(at: 2) == -40 - 17_999 % 50)
        #expect(abs(ring.time(at: 2) - t) < 0.011)
        #expect(abs(ring.time(at: 0) - (t - 20)) < 0.011)
    }

    @Test(arguments: FilterSettings.Kind.allCases)
    func everyKindBuildsFromSettings(kind: FilterSettings.Kind) {
        let settings = FilterSettings(kind: kind)
        var filter = RSSIFilter(settings)
        var last = 0.0
        for index in 0..<30 { last = filter.add(-65, at: Double(index) * 0.1, settings: settings) }
        #expect(last == -65)
    }
}
