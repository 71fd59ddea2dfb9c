import Testing

@testable import BeaconTracking

@Suite struct DistanceTests {
    func close(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
        guard let a else { return false }
        return abs(a - b) <= tolerance * max(1, abs(b))
    }

    @Test func elementaryFunctionsMatchKnownValues() {
        #expect(close(DistanceEstimator.exp(1), 2.718281828459045))
        #expect(close(DistanceEstimator.exp(-3.5), 0.0301973834223185))
        #expect(close(DistanceEstimator.log(10), 2.302585092994046))
        #expect(close(DistanceEstimator.log(0.001), -6.907755278982137))
        #expect(close(DistanceEstimator.power(10, 0.5), 3.1622776601683795))
        #expect(close(DistanceEstimator.power(2, 10), 1024))
        #expect(DistanceEstimator.power(0, 3) == 0)
        #expect(DistanceEstimator.exp(1000) == .infinity)
        #expect(DistanceEstimator.exp(-1000) == 0)
    }

    /// The series stop at the first term that cannot change the sum: the same bits as summing every term (as they
    /// did before), so no published distance changes. Inputs: every range `power` sees (ratios of RSSI to power,
    /// 10 for the path-loss model, exponents up to ±60) and far beyond.
    @Test func earlyStoppingSeriesGiveTheSameBitsAsTheFullSums() {
        var inputs: [Double] = [1, 2, 0.5, 1.5, 10, 0.001, 1e-300, 1e300, 75.0 / 59.0, 59.0 / 75.0]
        var geometric = 1e-6
        while geometric < 1e6, inputs.count < 30_000 {  // 1e-6 ... 1e6 in steps of 0.13 % (about 21,000)
            inputs.append(geometric)
            geometric *= 1.0013
        }
        for step in 0..<20_000 { inputs.append(0.3 + Double(step) * 2.7 / 20_000) }  // ratios RSSI / power
        var logMismatches = 0
        var expMismatches = 0
        for x in inputs {
            let log = DistanceEstimator.log(x)
            if log.bitPattern != DistanceEstimator.log(x, stoppingEarly: false).bitPattern { logMismatches += 1 }
            let e = (x.truncatingRemainder(dividingBy: 60)) * (x > 100 ? -1 : 1)
            let exp = DistanceEstimator.exp(e)
            if exp.bitPattern != DistanceEstimator.exp(e, stoppingEarly: false).bitPattern { expMismatches += 1 }
        }
        #expect(logMismatches == 0)
        #expect(expMismatches == 0)
    }

    @Test func ablCurveFit() {
        let estimator = DistanceEstimator()
        // At the measured power the ratio is 1: 0.42093 + 0.54992.
        #expect(close(estimator.distance(rssi: -59, measuredPower: -59, format: "ibeacon"), 0.42093 + 0.54992))
        // r = 75/59; 0.42093 * r^6.9476 + 0.54992.
        let r = 75.0 / 59.0
        #expect(
            close(
                estimator.distance(rssi: -75, measuredPower: -59, format: "ibeacon"),
                0.42093 * DistanceEstimator.power(r, 6.9476) + 0.54992))
        // Stronger than the measured power: r^10.
        #expect(
            close(
                estimator.distance(rssi: -50, measuredPower: -59, format: "ibeacon"),
                DistanceEstimator.power(50.0 / 59.0, 10)))
    }

    @Test func curve2013() {
        let estimator = DistanceEstimator(settings: DistanceSettings(model: .curve2013))
        #expect(close(estimator.distance(rssi: -59, measuredPower: -59, format: "x"), 0.89976 + 0.111))
    }

    @Test func pathLossWithReceiverOffsetAndFormatDefaults() {
        let settings = DistanceSettings(
            model: .pathLoss, pathLossExponent: 2, receiverOffsetDB: -5,
            measuredPower: ["eddystone-tlm": -70])
        let estimator = DistanceEstimator(settings: settings)
        // -74 + (-5) = -79 against -59 with n = 2: 10^(20/20) = 10 m.
        #expect(close(estimator.distance(rssi: -74, measuredPower: -59, format: "ibeacon"), 10))
        // Format default -70 applies without a transmitted power: 10^((-70 + 80) / 20).
        #expect(
            close(
                estimator.distance(rssi: -75, measuredPower: nil, format: "eddystone-tlm"),
                DistanceEstimator.power(10, 0.5)))
        // Other formats use the global default -59.
        #expect(close(estimator.distance(rssi: -54, measuredPower: nil, format: "device"), 1))
    }

    @Test func impossibleInputsGiveNoEstimate() {
        let estimator = DistanceEstimator()
        #expect(estimator.distance(rssi: 0, measuredPower: -59, format: "ibeacon") == nil)
        #expect(estimator.distance(rssi: .nan, measuredPower: -59, format: "ibeacon") == nil)
        #expect(estimator.distance(rssi: -60, measuredPower: 4, format: "ibeacon") == nil)
    }

    @Test func settingsValidation() {
        #expect(DistanceSettings().validate().isEmpty)
        let bad = DistanceSettings(
            pathLossExponent: 0, receiverOffsetDB: 99, measuredPower: ["ibeacon": 10],
            defaultMeasuredPower: -200)
        #expect(
            bad.validate().map(\.path) == [
                "distance.path_loss_exponent", "distance.receiver_offset_db",
                "distance.default_measured_power", "distance.measured_power.ibeacon",
            ])
        #expect(DistanceModel(rawValue: "path_loss") == .pathLoss)
    }
}
