/// A source of raw HCI events: the live scanner on a Bluetooth adapter (HCIScanner's `HCIScanner`) or a
/// btsnoop capture (`ReplaySource`). The pipeline consumes either the same way.
public protocol HCIEventSource: AnyObject, Sendable {
    /// Starts the source and returns once it runs; from then on it hands its events to `sink` in batches
    /// (one per wake-up) until it stops: `stop()`, the end of a capture, the sink refusing more, or an error
    /// the source cannot recover from (see `failure`), after which it calls `sink.finish()`. Throws, without
    /// touching the sink, when it cannot start. Single use.
    func start(into sink: any HCIEventSink) async throws

    /// Stops the source; it finishes the sink soon after. Safe to call more than once.
    func stop()

    /// True once `stop()` was called (events handed over before may still be waiting in the sink).
    var isStopped: Bool { get }

    /// Counters since the start.
    var statistics: HCISourceStatistics { get }

    /// The error that ended the source, nil while running or after a normal end.
    var failure: (any Error)? { get }
}

/// Counters a source keeps.
public struct HCISourceStatistics: Sendable, Equatable {
    /// Events handed over.
    public var delivered: UInt64
    /// Events dropped because the consumer fell behind (the oldest waiting events are dropped).
    public var dropped: UInt64
    /// Scan restarts, adapter power cycles and adapter reopens (after it disappeared) done by supervision,
    /// counted when attempted.
    public var scanRestarts: UInt64
    public var adapterPowerCycles: UInt64
    public var adapterReopens: UInt64

    public init(
        delivered: UInt64 = 0, dropped: UInt64 = 0, scanRestarts: UInt64 = 0, adapterPowerCycles: UInt64 = 0,
        adapterReopens: UInt64 = 0
    ) {
        self.delivered = delivered
        self.dropped = dropped
        self.scanRestarts = scanRestarts
        self.adapterPowerCycles = adapterPowerCycles
        self.adapterReopens = adapterReopens
    }
}
