import BeaconModel

/// A seeded, deterministic pseudo-random generator: xoshiro256** seeded through SplitMix64. The same seed
/// gives the same sequence on every machine and toolchain (the system generator does not).
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64
    private var spareGaussian: Double?

    public init(seed: UInt64) {
        var mix = seed
        func splitMix() -> UInt64 {
            mix &+= 0x9E37_79B9_7F4A_7C15
            var z = mix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    /// An independent stream for `index` (e.g. one per beacon), so adding a beacon does not change the others.
    public init(seed: UInt64, stream index: Int) {
        self.init(seed: seed ^ (UInt64(truncatingIfNeeded: index) &+ 1) &* 0xD1B5_4A32_D192_ED03)
    }

    public mutating func next() -> UInt64 {
        let result = rotate(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotate(s3, 45)
        return result
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Uniform in [low, high).
    public mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * uniform() }

    /// Standard normal (Marsaglia's polar method).
    public mutating func gaussian() -> Double {
        if let spare = spareGaussian {
            spareGaussian = nil
            return spare
        }
        while true {
            let u = uniform(-1, 1)
            let v = uniform(-1, 1)
            let s = u * u + v * v
            guard s > 0, s < 1 else { continue }
            let factor = (-2 * ElementaryMath.ln(s) / s).squareRoot()
            spareGaussian = v * factor
            return u * factor
        }
    }

    /// Exponentially distributed with the given mean.
    public mutating func exponential(mean: Double) -> Double { -mean * ElementaryMath.ln(1 - uniform()) }
}
