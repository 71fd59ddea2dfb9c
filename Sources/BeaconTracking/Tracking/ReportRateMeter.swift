import BeaconModel

/// Reports per second over roughly the last 10 s, from two 10 s buckets (the previous one weighted by how much
/// of it still lies inside the window). Constant memory.
struct ReportRateMeter: Sendable {
    static let bucket: Double = 10
    private var bucketStart: Timestamp = -.infinity
    private var current: UInt32 = 0
    private var previous: UInt32 = 0

    package mutating func record(at time: Timestamp) {
        roll(to: time)
        current &+= 1
    }

    package func rate(at time: Timestamp) -> Double {
        var meter = self
        meter.roll(to: time)
        let elapsed = min(max(time - meter.bucketStart, 0), Self.bucket)
        let weight = 1 - elapsed / Self.bucket
        return (Double(meter.previous) * weight + Double(meter.current)) / Self.bucket
    }

    private mutating func roll(to time: Timestamp) {
        guard time - bucketStart >= Self.bucket else { return }
        if time - bucketStart >= 2 * Self.bucket || !bucketStart.isFinite {
            previous = 0
            bucketStart =
                bucketStart.isFinite ? time - (time - bucketStart).truncatingRemainder(dividingBy: Self.bucket) : time
        } else {
            previous = current
            bucketStart += Self.bucket
        }
        current = 0
    }
}
