/// The delivery latency histogram (`beaconbridge_delivery_latency_seconds`, docs/status-page.md): seconds from an
/// event's acceptance by the delivery machine (`.publish`) to the broker's acknowledgement of it (the time the
/// acknowledgement reached the publisher), for live events and outbox rows alike (not snapshot entries).
///
/// Buckets (upper bounds, seconds): 5, 10, 25, 50, 100, 250, 500 ms (an event sent at once on loopback, a LAN, a
/// slow link or a full in-flight window), 1, 2.5, 5, 10, 30 s (a broker that stalls, a reconnect), 1, 5 and 30 min
/// (a backlog drained from the outbox after an outage), then `+Inf`. Observing is a scan of these bounds and two
/// additions, no allocation per event: the counts are one array, which the publisher's copy of its figures after
/// a turn shares, so the first observation of the next turn copies it (once per turn, i.e. per batch, not per
/// event).
public struct DeliveryLatency: Sendable, Equatable {
    public static let bounds: [Double] = [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800,
    ]

    /// Observations per bucket, not cumulative: `counts[i]` is how many fell in (`bounds[i-1]`, `bounds[i]`]; the
    /// last one those over the last bound.
    public private(set) var counts = [UInt64](repeating: 0, count: DeliveryLatency.bounds.count + 1)
    public private(set) var count: UInt64 = 0
    public private(set) var sum: Double = 0

    public init() {}

    public mutating func observe(_ seconds: Double) {
        let value = seconds.isFinite ? max(0, seconds) : 0
        var index = 0
        while index < Self.bounds.count, value > Self.bounds[index] { index += 1 }
        counts[index] += 1
        count += 1
        sum += value
    }

    /// The cumulative counts Prometheus' `_bucket{le=...}` samples carry, one per bound, then `+Inf` (= `count`).
    public var cumulative: [(upperBound: Double, count: UInt64)] {
        var running: UInt64 = 0
        var out: [(Double, UInt64)] = []
        out.reserveCapacity(counts.count)
        for (index, bucket) in counts.enumerated() {
            running += bucket
            out.append((index < Self.bounds.count ? Self.bounds[index] : .infinity, running))
        }
        return out
    }
}

/// When the delivery machine accepted each batch of events: a ring of (first sequence, time) per accepted batch,
/// allocated once (`capacity` entries, 16 bytes each), so an acknowledged event's acceptance is found by its
/// sequence (a binary search) without storing a time per event. Sequences grow across batches; an event older
/// than the ring's oldest batch (a long backlog, or one stored before a restart) has no acceptance time and is not
/// observed (`DeliveryCounters.latencyUnknown` counts them).
struct AcceptanceLog: Sendable {
    static let capacity = 1024

    private var firsts = [UInt64](repeating: 0, count: AcceptanceLog.capacity)
    private var times = [Double](repeating: 0, count: AcceptanceLog.capacity)
    /// Index of the oldest entry, and how many are held.
    private var start = 0
    private var held = 0

    /// A batch whose first event has `sequence` was accepted at `time`. A batch at the same time as the previous
    /// one joins it; a sequence that does not grow (a new sequence space) starts the ring over.
    mutating func note(first sequence: UInt64, at time: Double) {
        if held > 0 {
            let last = (start + held - 1) % Self.capacity
            if sequence <= firsts[last] {
                held = 0
            } else if times[last] == time {
                return
            }
        }
        if held == Self.capacity {
            start = (start + 1) % Self.capacity
            held -= 1
        }
        let slot = (start + held) % Self.capacity
        firsts[slot] = sequence
        times[slot] = time
        held += 1
    }

    /// When the event with `sequence` was accepted: the time of the last batch that starts at or before it; nil
    /// when it is older than the oldest batch held.
    func acceptance(of sequence: UInt64) -> Double? {
        guard held > 0, sequence >= firsts[start] else { return nil }
        var low = 0
        var high = held - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if firsts[(start + middle) % Self.capacity] <= sequence { low = middle } else { high = middle - 1 }
        }
        return times[(start + low) % Self.capacity]
    }
}
