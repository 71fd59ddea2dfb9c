/// The few elementary functions the room arbiter's smoothing and the simulators (BeaconSimulation) need, in plain
/// Swift (the standard library has no `log`/`exp` and the core imports no C). Accurate to a few ulps over the
/// ranges used here. (`DistanceEstimator` keeps its own series, with other term counts: sharing one would need a
/// check that no distance moves.)
public enum ElementaryMath {
    package static let ln2 = 0.693_147_180_559_945_3
    static let ln10 = 2.302_585_092_994_046

    /// Natural logarithm: x = m·2^e with m in [1, 2), ln m = 2·atanh((m-1)/(m+1)) as a series.
    public static func ln(_ x: Double) -> Double {
        guard x > 0 else { return x == 0 ? -.infinity : .nan }
        guard x.isFinite else { return x }
        var m = x.significand
        var e = Double(x.exponent)
        if m > 1.414_213_562_373_095 {
            m /= 2
            e += 1
        }
        let z = (m - 1) / (m + 1)
        let z2 = z * z
        var term = z
        var sum = 0.0
        var k = 1.0
        while abs(term) > 1e-18 * abs(sum) + 1e-300 {
            sum += term / k
            term *= z2
            k += 2
            if k > 61 { break }
        }
        return 2 * sum + e * ln2
    }

    public static func log10(_ x: Double) -> Double { ln(x) / ln10 }

    /// e^x: x = k·ln 2 + r with |r| <= ln2/2, a Taylor series for e^r, scaled by 2^k.
    public static func exp(_ x: Double) -> Double {
        guard x.isFinite else { return x.isNaN ? x : (x > 0 ? x : 0) }
        if x > 709.78 { return .infinity }
        if x < -745.1 { return 0 }
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        // Taylor series to r^13 in Horner form with precomputed 1/n!: |r| <= 0.347, so the first omitted term
        // is below 2e-16.
        var sum = inverseFactorials[13]
        for n in stride(from: 12, through: 0, by: -1) { sum = sum * r + inverseFactorials[n] }
        return Double(sign: .plus, exponent: Int(k), significand: sum)
    }

    /// 1/n! for n = 0...13.
    private static let inverseFactorials: [Double] = {
        var values = [1.0]
        for n in 1...13 { values.append(values[n - 1] / Double(n)) }
        return values
    }()

    /// 10^x.
    public static func pow10(_ x: Double) -> Double { exp(x * ln10) }
}
