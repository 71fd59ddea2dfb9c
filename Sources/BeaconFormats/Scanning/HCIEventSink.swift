/// Where a source hands its events over: one batch per wake-up of the live reading thread, one per pacing
/// quantum of a replay. Implemented by the bounded mailbox in front of the consuming task (`EventMailbox`).
public protocol HCIEventSink: AnyObject, Sendable {
    /// Hands a batch over without waiting (the live reading thread must never block on the consumer). When
    /// more than the mailbox's capacity would be waiting, the oldest waiting events make room and are
    /// counted in the result.
    /// The batch is taken over (`consuming`): a producer that passes it with `consume` keeps no reference, so the
    /// consumer can give its buffer back empty without a copy (`spareBatch()`).
    func offer(_ batch: consuming [CapturedHCIEvent]) -> HCIEventOffer

    /// Hands a batch over, waiting while the mailbox is full (a replay: nothing is dropped, the source
    /// slows down to the consumer). False once the consumer is gone or the sink finished.
    func deliver(_ batch: [CapturedHCIEvent]) async -> Bool

    /// `deliver` for a source on a thread of its own (the replay thread; never a pool thread): blocks that
    /// thread while the mailbox is full. False once the consumer is gone or the sink finished.
    func deliverWaiting(_ batch: consuming [CapturedHCIEvent]) -> Bool

    /// The source ended (stopped, end of a capture, or a failure reported through its `failure`). Nothing is
    /// handed over after it.
    func finish()

    /// An emptied buffer the consumer is done with, for the producer's next batch (nil: make one). A source
    /// that fills a batch and hands it over on every wake-up then allocates no batch buffer once the consumer
    /// gives buffers back (`EventMailbox.recycle`).
    func spareBatch() -> [CapturedHCIEvent]?
}

extension HCIEventSink {
    public func spareBatch() -> [CapturedHCIEvent]? { nil }

    /// The buffer for a producer's next batch, after it handed the last one over: one the consumer gave back
    /// (`spareBatch()`), else a new one with room for `capacity` events (emptying the handed-over one instead
    /// would copy it, since the sink holds it now).
    public func nextBatch(capacity: Int) -> [CapturedHCIEvent] {
        if let spare = spareBatch() { return spare }
        var fresh: [CapturedHCIEvent] = []
        fresh.reserveCapacity(capacity)
        return fresh
    }
}

/// What happened to an offered batch.
public struct HCIEventOffer: Sendable, Equatable {
    /// False once the consumer is gone or the sink finished: the source should stop.
    public var accepted: Bool
    /// Events dropped to make room (oldest first; may include events of this batch when it alone is larger
    /// than the capacity).
    public var dropped: Int

    public init(accepted: Bool, dropped: Int = 0) {
        self.accepted = accepted
        self.dropped = dropped
    }

    public static let closed = HCIEventOffer(accepted: false)
}
