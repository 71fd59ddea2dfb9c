import BeaconModel

/// Mean of the samples inside a Tukey fence over a time window (ESPresense 2025): of the samples of the last
/// `window` seconds, those within [Q1 - k·IQR, Q3 + k·IQR] are averaged. Quartiles interpolate linearly.
public struct MedianIQRRSSIFilter: Sendable {
    public let window: Double
    public let fenceK: Double
    private var ring: RSSISampleRing

    public init(window: Double = 15, fenceK: Double = 1.5, maxSamples: Int = 64) {
        self.window = window
        self.fenceK = fenceK
        ring = RSSISampleRing(capacity: maxSamples)
    }

    public var sampleCount: Int { ring.count }

    @discardableResult
    public mutating func add(_ rssi: Int, at time: Timestamp) -> Double {
        ring.append(rssi: rssi, at: time)
        ring.removeOlder(than: time - window)
        let k = fenceK
        return ring.withSortedRSSI { Self.fencedMean($0, k: k) }
    }

    static func fencedMean(_ sorted: UnsafeMutableBufferPointer<Int8>, k: Double) -> Double {
        let q1 = quantile(sorted, 0.25)
        let q3 = quantile(sorted, 0.75)
        let spread = q3 - q1
        let low = q1 - k * spread
        let high = q3 + k * spread
        var sum = 0.0
        var kept = 0
        for value in sorted where Double(value) >= low && Double(value) <= high {
            sum += Double(value)
            kept += 1
        }
        // The median is always inside the fence, so `kept` is at least 1 for a non-empty window.
        return kept > 0 ? sum / Double(kept) : quantile(sorted, 0.5)
    }

    static func quantile(_ sorted: UnsafeMutableBufferPointer<Int8>, _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let lower = Int(position)
        let upper = min(lower + 1, sorted.count - 1)
        let fraction = position - Double(lower)
        return Double(sorted[lower]) + fraction * Double(Int(sorted[upper]) - Int(sorted[lower]))
    }

    public mutating func reset() { ring.removeAll() }
}
