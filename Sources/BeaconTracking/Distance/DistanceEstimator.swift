import BeaconModel

/// Estimates distance from RSSI with the model chosen in `DistanceSettings`.
public struct DistanceEstimator: DistanceEstimating, Sendable, Equatable {
    public var settings: DistanceSettings

    public init(settings: DistanceSettings = DistanceSettings()) { self.settings = settings }

    /// Metres for an RSSI, after adding the receiver offset. Uses the beacon's measured power when it has one,
    /// else the format's default. Nil for non-finite input, RSSI 0 or a non-negative measured power.
    public func distance(rssi: Double, measuredPower: Int?, format: String) -> Double? {
        let power = Double(measuredPower ?? settings.measuredPower(for: format))
        let corrected = rssi + settings.receiverOffsetDB
        guard corrected.isFinite, corrected != 0, power < 0 else { return nil }
        if let curve = settings.model.curve {
            let ratio = corrected / power
            if ratio < 1 { return Self.power(ratio, 10) }
            return curve.a * Self.power(ratio, curve.b) + curve.c
        }
        let exponent = settings.pathLossExponent
        guard exponent > 0 else { return nil }
        return Self.power(10, (power - corrected) / (10 * exponent))
    }

    /// x^y for x > 0 as exp(y ln x). The core imports neither Foundation nor libm, and the standard library has
    /// no elementary functions, so `exp` and `log` below are small series implementations (relative error
    /// around 1e-15, checked against known values in the tests).
    ///
    /// Both series stop at the first term too small to change the sum (under a quarter of its ulp; every later
    /// term is smaller still), which gives the same bits as summing all 30 / 24 terms at about half the cost:
    /// this runs for every report with an RSSI (issue 45). `stoppingEarly: false` sums every term: `DistanceTests`
    /// compares the two bit for bit.
    package static func power(_ base: Double, _ exponent: Double) -> Double {
        guard base > 0 else { return 0 }
        return exp(exponent * log(base))
    }

    /// Natural logarithm by range reduction to [1, 2) and the atanh series.
    package static func log(_ x: Double) -> Double { log(x, stoppingEarly: true) }

    @inline(__always)
    package static func log(_ x: Double, stoppingEarly: Bool) -> Double {
        guard x > 0, x.isFinite else { return x == 0 ? -.infinity : .nan }
        let exponent = Double(x.exponent)
        let mantissa = x.significand  // in [1, 2)
        let y = (mantissa - 1) / (mantissa + 1)
        let y2 = y * y
        var term = y
        var sum = 0.0
        var n = 1.0
        for _ in 0..<30 {
            let addend = term / n
            if stoppingEarly, addend.magnitude < sum.ulp / 4 { break }  // later terms: smaller, same sign
            sum += addend
            term *= y2
            n += 2
        }
        return 2 * sum + exponent * 0.693_147_180_559_945_3
    }

    /// e^x by range reduction (x = k ln2 + r) and the Taylor series of e^r.
    package static func exp(_ x: Double) -> Double { exp(x, stoppingEarly: true) }

    @inline(__always)
    package static func exp(_ x: Double, stoppingEarly: Bool) -> Double {
        guard x.isFinite else { return x > 0 ? .infinity : 0 }
        if x > 709 { return .infinity }
        if x < -745 { return 0 }
        let ln2 = 0.693_147_180_559_945_3
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        for n in 1..<25 {
            term *= r / Double(n)
            if stoppingEarly, term.magnitude < sum.ulp / 4 { break }  // |r| < 0.35: each term below the last
            sum += term
        }
        return Double(sign: .plus, exponent: Int(k), significand: sum)
    }
}
