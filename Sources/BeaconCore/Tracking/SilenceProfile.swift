/// What a beacon's gaps between reports usually are: a histogram of the gaps in half-octave buckets from
/// 50 ms up (bucket `k` holds gaps of 0.05 * 2^(k/2) s up to the next bucket's start; the last one holds
/// everything from about 39 minutes on). Constant memory (32 saturating counts, one decay time), so every
/// tracked beacon can carry one.
///
/// Two figures come out of it:
/// - the advertising `interval`, the median gap (the interval as heard, so lost reports lengthen it);
/// - the `usualSilence`, the longest silence the beacon has come back from at least twice (its second-longest
///   gap): a phone that goes quiet for minutes and returns does so again, a tag that dropped out once does not
///   make it a habit.
/// Counts halve every `decayPeriod` of capture time, so a habit is forgotten within a day once it stops.
struct SilenceProfile: Sendable, Equatable {
    /// The lower edge of bucket 0, seconds.
    static let base = 0.05
    static let bucketCount = 32
    /// Gaps a beacon must have shown before its interval is stated.
    static let minimumGaps = 8
    /// Every count halves after this much capture time since the last halving.
    static let decayPeriod = 6.0 * 3_600

    private var counts = SIMD32<UInt8>(repeating: 0)
    private var lastDecay = -Double.infinity
    /// The sum of `counts` (at most 32 * 255).
    private var total: UInt16 = 0
    /// The bucket of the second-longest gap once `minimumGaps` were recorded, else -1: kept by `record`, since
    /// the engine asks for the away time several times per report and the answer changes only when a gap at
    /// or above it arrives.
    private var usualBucket: Int8 = -1

    /// Records the gap between two reports ending at `time`; gaps of zero or less (the same instant, or a
    /// clock that stepped back) say nothing and are skipped.
    mutating func record(gap: Double, at time: Timestamp) {
        guard gap > 0, gap.isFinite else { return }
        var decayed = false
        if !lastDecay.isFinite {
            lastDecay = time
        } else if time - lastDecay >= Self.decayPeriod {
            counts &>>= 1
            total = UInt16(counts.indices.reduce(0) { $0 + Int(counts[$1]) })
            lastDecay = time
            decayed = true
        }
        let bucket = Self.bucket(of: gap)
        if counts[bucket] < .max {
            counts[bucket] += 1
            total += 1
        }
        if decayed || bucket >= Int(usualBucket) { usualBucket = Int8(secondLongestBucket()) }
    }

    /// Gaps recorded (saturating per bucket, so a lower bound beyond 255 per bucket).
    var gaps: Int { Int(total) }

    /// The bucket holding the second-longest gap, -1 before `minimumGaps` gaps.
    private func secondLongestBucket() -> Int {
        guard total >= Self.minimumGaps else { return -1 }
        var seen = 0
        for bucket in counts.indices.reversed() {
            seen += Int(counts[bucket])
            if seen >= 2 { return bucket }
        }
        return -1
    }

    /// The median gap, seconds (the centre of its bucket); nil until `minimumGaps` gaps were recorded.
    var interval: Double? {
        let total = gaps
        guard total >= Self.minimumGaps else { return nil }
        var seen = 0
        for bucket in counts.indices {
            seen += Int(counts[bucket])
            if 2 * seen >= total { return Self.centre(bucket) }
        }
        return nil
    }

    /// The second-longest gap, rounded up to its bucket's upper edge: the longest silence the beacon came back
    /// from more than once (two silences of 3 and 4 minutes make 4 minutes usual, within a half-octave). Nil
    /// until `minimumGaps` gaps were recorded.
    var usualSilence: Double? { usualBucket < 0 ? nil : Self.lowerEdge(Int(usualBucket) + 1) }

    static func bucket(of gap: Double) -> Int {
        let ratio = gap / base
        guard ratio >= 1, ratio.isFinite else { return ratio.isFinite ? 0 : bucketCount - 1 }
        // ratio = m * 2^e with m in [1, 2): the half-octave is 2e, plus one from m = sqrt(2) on.
        let position = 2 * Int(ratio.exponent) + (ratio.significand >= rootTwo ? 1 : 0)
        return min(position, bucketCount - 1)
    }

    /// The lower edge of bucket `k`, seconds: 0.05 * 2^(k/2).
    static func lowerEdge(_ k: Int) -> Double {
        Double(sign: .plus, exponent: k >> 1, significand: k & 1 == 1 ? rootTwo : 1) * base
    }

    /// The geometric centre of bucket `k`, seconds: 0.05 * 2^(k/2 + 1/4).
    static func centre(_ k: Int) -> Double { lowerEdge(k) * fourthRootTwo }

    static let rootTwo = 1.414_213_562_373_095_1
    static let fourthRootTwo = 1.189_207_115_002_721_1
}
