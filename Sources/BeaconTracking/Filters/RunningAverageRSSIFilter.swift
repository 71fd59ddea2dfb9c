import BeaconModel

/// The Android Beacon Library's `RunningAverageRssiFilter`: the samples of the last `window` seconds, sorted;
/// with more than 2 samples `count/10 + 1` are dropped from each end; the mean of the rest. Unlike ABL the
/// history is bounded (`maxSamples`, oldest dropped first).
public struct RunningAverageRSSIFilter: Sendable {
    public let window: Double
    private var ring: RSSISampleRing

    public init(window: Double = 20, maxSamples: Int = 64) {
        self.window = window
        ring = RSSISampleRing(capacity: maxSamples)
    }

    public var sampleCount: Int { ring.count }

    /// Adds a report at `time` (not earlier than the previous one); returns the new average.
    @discardableResult
    public mutating func add(_ rssi: Int, at time: Timestamp) -> Double {
        ring.append(rssi: rssi, at: time)
        ring.removeOlder(than: time - window)
        return ring.withSortedRSSI(Self.trimmedMean)
    }

    static func trimmedMean(_ sorted: UnsafeMutableBufferPointer<Int8>) -> Double {
        let size = sorted.count
        var start = 0
        var end = size - 1
        if size > 2 {
            start = size / 10 + 1
            end = size - size / 10 - 2
        }
        var sum = 0
        for index in start...end { sum += Int(sorted[index]) }
        return Double(sum) / Double(end - start + 1)
    }

    public mutating func reset() { ring.removeAll() }
}
