import BeaconModel

/// A fixed-capacity ring of (time, RSSI) samples for the window filters, 4 bytes a sample: 24 bits of time in
/// 10 ms ticks relative to `base`, 8 bits of RSSI. Storage is allocated once at the capacity, so a beacon's
/// history never grows past it.
public struct RSSISampleRing: Sendable {
    private var storage: [UInt32] = []
    private var head: Int32 = 0
    private var stored: Int32 = 0
    private let limit: Int32
    private var base: Timestamp = 0

    private static let maxTicks: Int64 = 0xFF_FFFF

    /// `capacity` is clamped to 1...65535 (settings are validated to 3...1024 before they get here).
    public init(capacity: Int) {
        limit = Int32(min(max(capacity, 1), 65_535))
    }

    public var count: Int { Int(stored) }
    public var capacity: Int { Int(limit) }

    /// Appends a sample; drops the oldest when full. `time` must not go backwards (the tracker clamps).
    public mutating func append(rssi: Int, at time: Timestamp) {
        if storage.isEmpty { storage.reserveCapacity(Int(limit)) }
        if stored == 0 {
            base = time
            head = 0
        }
        var ticks = Self.ticks(time - base)
        if ticks > Self.maxTicks {
            rebase()
            ticks = min(Self.ticks(time - base), Self.maxTicks)
        }
        let packed = UInt32(ticks) << 8 | UInt32(UInt8(bitPattern: Int8(clamping: rssi)))
        if stored == limit {
            storage[Int(head)] = packed
            head = (head + 1) % limit
        } else if storage.count < Int(limit) {
            storage.append(packed)
            stored += 1
        } else {
            storage[Int((head + stored) % limit)] = packed
            stored += 1
        }
    }

    /// Drops samples older than `cutoff`.
    public mutating func removeOlder(than cutoff: Timestamp) {
        while stored > 0, time(at: 0) < cutoff {
            head = (head + 1) % limit
            stored -= 1
        }
    }

    public mutating func removeAll() {
        stored = 0
        head = 0
    }

    /// The RSSI of the `index`-th oldest sample.
    public func rssi(at index: Int) -> Int {
        Int(Int8(bitPattern: UInt8(truncatingIfNeeded: storage[physical(index)])))
    }

    public func time(at index: Int) -> Timestamp {
        base + Double(storage[physical(index)] >> 8) / 100
    }

    private func physical(_ index: Int) -> Int { (Int(head) + index) % Int(limit) }

    private static func ticks(_ seconds: Double) -> Int64 {
        guard seconds > 0 else { return 0 }
        guard seconds < 1e9 else { return Int64.max }
        return Int64((seconds * 100).rounded())
    }

    /// Moves `base` to the oldest sample so offsets fit 24 bits again (after ~46 h of uninterrupted samples).
    private mutating func rebase() {
        guard stored > 0 else { return }
        let shift = storage[Int(head)] >> 8
        for index in 0..<Int(stored) {
            let slot = physical(index)
            let ticks = (storage[slot] >> 8) - shift
            storage[slot] = ticks << 8 | (storage[slot] & 0xFF)
        }
        base += Double(shift) / 100
    }

    /// Calls `body` with the RSSI values currently held, sorted ascending, in temporary storage.
    /// A counting sort over the values' range: O(samples + range), no comparisons.
    public func withSortedRSSI<R>(_ body: (UnsafeMutableBufferPointer<Int8>) -> R) -> R {
        let count = Int(stored)
        var low = Int.max
        var high = Int.min
        for index in 0..<count {
            let value = rssi(at: index)
            low = min(low, value)
            high = max(high, value)
        }
        return withUnsafeTemporaryAllocation(of: Int8.self, capacity: max(1, count)) { buffer in
            let values = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
            guard count > 0 else { return body(values) }
            let range = high - low + 1
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: range) { counts in
                counts.initialize(repeating: 0)
                for index in 0..<count { counts[rssi(at: index) - low] += 1 }
                var out = 0
                for offset in 0..<range {
                    for _ in 0..<Int(counts[offset]) {
                        values[out] = Int8(offset + low)
                        out += 1
                    }
                }
            }
            return body(values)
        }
    }
}
