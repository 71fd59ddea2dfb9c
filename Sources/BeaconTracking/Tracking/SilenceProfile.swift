import BeaconModel

/// What a beacon's gaps between reports usually are: a histogram of the gaps in half-octave buckets from
/// 50 ms up (bucket `k` holds gaps of 0.05 * 2^(k/2) s up to the next bucket's start; the last one holds
/// everything from about 39 minutes on). Constant memory (32 four-bit saturating counts, one decay time and a
/// running median: 32 bytes), so every tracked beacon can carry one without growing the tracker's slots much.
///
/// Two figures come out of it:
/// - the advertising `interval`, the median gap (the interval as heard, so lost reports lengthen it), kept by a
///   streaming median rather than read from the histogram: a tag at 10 Hz fills any bucket in seconds, and once
///   the buckets of its one- and two-interval gaps both saturate, a histogram's median says twice the interval;
/// - the `usualSilence`, the longest silence the beacon has come back from at least twice (its second-longest
///   gap): a phone that goes quiet for minutes and returns does so again, a tag that dropped out once does not
///   make it a habit.
/// Counts halve every `decayPeriod` of capture time, so a habit is forgotten within a day once it stops.
struct SilenceProfile: Sendable, Equatable {
    /// The lower edge of bucket 0, seconds.
    package static let base = 0.05
    static let bucketCount = 32
    /// Gaps a beacon must have shown before its interval is stated.
    static let minimumGaps = 8
    /// Every count halves after this much capture time since the last halving.
    static let decayPeriod = 6.0 * 3_600
    /// A bucket's count saturates here (four bits): the counts only need to tell once from twice from often.
    static let countLimit = 15
    /// Each gap after the first `minimumGaps` moves the running median this factor toward itself (1/16 octave,
    /// so the interval stated stays within about 4.4 % of the true median).
    static let medianStep: Float = 1.044_273_8

    /// Buckets 0-15 in `low` and 16-31 in `high`, four bits each.
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    private var lastDecay = -Double.infinity
    /// The running median gap, seconds; 0 until `minimumGaps` gaps were recorded (gaps are never 0).
    private var median: Float = 0
    /// Gaps recorded, saturating at 255 (only compared with `minimumGaps`).
    private var recorded: UInt8 = 0
    /// The bucket of the second-longest gap once `minimumGaps` were recorded, else -1: kept by `record`, since
    /// the engine asks for the away time several times per report and the answer changes only when a gap
    /// longer than it arrives (or the counts decay).
    private var usualBucket: Int8 = -1

    /// Records the gap between two reports ending at `time`; gaps of zero or less (the same instant, or a
    /// clock that stepped back) say nothing and are skipped.
    package mutating func record(gap: Double, at time: Timestamp) {
        guard gap > 0, gap.isFinite else { return }
        var decayed = false
        if !lastDecay.isFinite {
            lastDecay = time
        } else if time - lastDecay >= Self.decayPeriod {
            // Halve every four-bit count: shift, then clear the bit each count took from its neighbour.
            low = (low >> 1) & 0x7777_7777_7777_7777
            high = (high >> 1) & 0x7777_7777_7777_7777
            lastDecay = time
            decayed = true
        }
        let bucket = Self.bucket(of: gap)
        if count(bucket) < Self.countLimit {
            if bucket < 16 { low &+= 1 << (4 * UInt64(bucket)) } else { high &+= 1 << (4 * UInt64(bucket - 16)) }
        }
        if recorded < .max { recorded += 1 }
        if Int(recorded) == Self.minimumGaps {
            median = Float(Self.centre(histogramMedian()))
        } else if Int(recorded) > Self.minimumGaps {
            let heard = Float(gap)
            if heard > median {
                median *= Self.medianStep
            } else if heard < median {
                median /= Self.medianStep
            }
        }
        if decayed || bucket > Int(usualBucket) { usualBucket = Int8(secondLongestBucket()) }
    }

    /// Gaps recorded (up to 255).
    var gaps: Int { Int(recorded) }

    /// The count of bucket `k` (0...31).
    private func count(_ k: Int) -> Int {
        Int((k < 16 ? low >> (4 * UInt64(k)) : high >> (4 * UInt64(k - 16))) & 0xF)
    }

    /// The bucket holding the second-longest gap, -1 before `minimumGaps` gaps.
    private func secondLongestBucket() -> Int {
        guard Int(recorded) >= Self.minimumGaps else { return -1 }
        var seen = 0
        for bucket in (0..<Self.bucketCount).reversed() {
            seen += count(bucket)
            if seen >= 2 { return bucket }
        }
        return -1
    }

    /// The bucket holding the median of the counts (exact while no count has saturated, as when the running
    /// median starts from it).
    private func histogramMedian() -> Int {
        let total = (0..<Self.bucketCount).reduce(0) { $0 + count($1) }
        var seen = 0
        for bucket in 0..<Self.bucketCount {
            seen += count(bucket)
            if 2 * seen >= total { return bucket }
        }
        return 0
    }

    /// The median gap, seconds: the running median, which starts from the histogram's after `minimumGaps` gaps
    /// and then moves 1/16 octave toward each gap. Nil until `minimumGaps` gaps were recorded.
    package var interval: Double? { median > 0 ? Double(median) : nil }

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
