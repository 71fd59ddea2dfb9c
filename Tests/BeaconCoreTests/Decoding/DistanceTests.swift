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

    /// The series as they were before they stopped early (all 30 / 24 terms): the early stop must give the same
    /// bits, so no published distance changes.
    static func fullLog(_ x: Double) -> Double {
        let exponent = Double(x.exponent)
        let mantissa = x.significand
        let y = (mantissa - 1) / (mantissa + 1)
        let y2 = y * y
        var term = y
        var sum = 0.0
        var n = 1.0
        for _ in 0..<30 {
            sum += term / n
            term *= y2
            n += 2
        }
        return 2 * sum + exponent * 0.693_147_180_559_945_3
    }

    static func fullExp(_ x: Double) -> Double {
        let ln2 = 0.693_147_180_559_945_3
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        for n in 1..<25 {
            term *= r / Double(n)
            sum += term
        }
        return Double(sign: .plus, exponent: Int(k), significand: sum)
    }

    @Test func earlyStoppingSeriesGiveTheSameBitsAsTheFullSums() {
        var generator = SystemRandomNumberGenerator()
        var inputs: [Double] = [1, 2, 0.5, 1.5, 10, 0.001, 1e-300, 1e300, 75.0 / 59.0, 59.0 / 75.0]
        for _ in 0..<20_000 { inputs.append(Double.random(in: 1e-6...1e6, using: &generator)) }
        for _ in 0..<20_000 { inputs.append(Double.random(in: 0.3...3, using: &generator)) }
        var logMismatches = 0
        var expMismatches = 0
        for x in inputs {
            if DistanceEstimator.log(x).bitPattern != Self.fullLog(x).bitPattern { logMismatches += 1 }
            let e = (x.truncatingRemainder(dividingBy: 60)) * (x > 100 ? -1 : 1)
            if DistanceEstimator.exp(e).bitPattern != Self.fullExp(e).bitPattern { expMismatches += 1 }
        }
        #expect(logMismatches == 0)
        #expect(expMismatches == 0)
        // And every RSSI the gateway can see (a tenth of a dB apart, as smoothed values are), through both curve
        // models and the path-loss model.
        var distanceMismatches: [String] = []
        var compared = 0
        for settings in [
            DistanceSettings(), DistanceSettings(model: .curve2013), DistanceSettings(model: .pathLoss),
        ] {
            let estimator = DistanceEstimator(settings: settings)
            for tenth in -1270...200 {
                let rssi = Double(tenth) / 10
                for power in [-40, -59, -65, -80] {
                    let new = estimator.distance(rssi: rssi, measuredPower: power, format: "ibeacon")
                    let old = Self.referenceDistance(settings, rssi: rssi, power: power)
                    compared += old == nil ? 0 : 1
                    if new?.bitPattern != old?.bitPattern {
                        distanceMismatches.append("\(settings.model) rssi \(rssi) power \(power)")
                    }
                }
            }
        }
        #expect(compared > 15_000)
        #expect(distanceMismatches.isEmpty, "\(distanceMismatches.prefix(5))")
    }

    static func referenceDistance(_ settings: DistanceSettings, rssi: Double, power: Int) -> Double? {
        let power = Double(power)
        let corrected = rssi + settings.receiverOffsetDB
        guard corrected.isFinite, corrected != 0, power < 0 else { return nil }
        let pow = { (base: Double, exponent: Double) in base > 0 ? fullExp(exponent * fullLog(base)) : 0 }
        if let curve = settings.model.curve {
            let ratio = corrected / power
            if ratio < 1 { return pow(ratio, 10) }
            return curve.a * pow(ratio, curve.b) + curve.c
        }
        return pow(10, (power - corrected) / (10 * settings.pathLossExponent))
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
