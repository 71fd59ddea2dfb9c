import BeaconModel

/// Collects one link's reports during a teach and summarises them (`TaughtLevel`). Bounded: it keeps at most
/// `capacity` reports (the first ones; a teach of 60 s at 10 Hz needs 600), so a chatty device cannot grow it.
public struct LevelRecorder: Sendable {
    public let capacity: Int
    private var samples: [Int8] = []
    /// Each kept report's capture time, in the order heard (the halves of `TaughtLevel.step`).
    private var times: [Timestamp] = []
    private var first: Timestamp = .nan
    private var last: Timestamp = .nan

    public init(capacity: Int = 1_200) {
        self.capacity = max(1, capacity)
    }

    /// Reports kept so far.
    public var count: Int { samples.count }

    /// Adds one report. RSSI outside the range a receiver reports (-127...20 dBm) is ignored.
    public mutating func add(rssi: Int, at time: Timestamp) {
        guard rssi >= -127, rssi <= 20, samples.count < capacity, time.isFinite else { return }
        if samples.isEmpty { first = time }
        samples.append(Int8(rssi))
        times.append(time)
        last = time
    }

    /// The recording's summary; nil before any report.
    public var summary: TaughtLevel? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.map(Double.init).sorted()
        let iqr = Self.quantile(sorted, 0.75) - Self.quantile(sorted, 0.25)
        return TaughtLevel(
            level: Self.quantile(sorted, 0.5), spread: iqr / 1.349, reports: sorted.count,
            seconds: max(0, last - first), step: step)
    }

    /// Reports each half of a recording needs before `step` is given: a median of fewer moves by several dB
    /// with the reports' own noise (about 4.4 dB per report).
    public static let minimumReportsPerHalf = 5

    /// The median of the second half of the recording (in capture time, split half way between the first and
    /// the last report) minus that of the first, dB; nil when a half has fewer than `minimumReportsPerHalf`.
    var step: Double? {
        guard samples.count >= 2 * Self.minimumReportsPerHalf, last > first else { return nil }
        let middle = first + (last - first) / 2
        var early: [Double] = []
        var late: [Double] = []
        for (sample, time) in zip(samples, times) {
            if time < middle { early.append(Double(sample)) } else { late.append(Double(sample)) }
        }
        guard early.count >= Self.minimumReportsPerHalf, late.count >= Self.minimumReportsPerHalf else { return nil }
        return Self.median(late.sorted()) - Self.median(early.sorted())
    }

    /// The median of sorted values.
    public static func median(_ sorted: [Double]) -> Double { quantile(sorted, 0.5) }

    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let lower = Int(position)
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (position - Double(lower)) * (sorted[upper] - sorted[lower])
    }
}
