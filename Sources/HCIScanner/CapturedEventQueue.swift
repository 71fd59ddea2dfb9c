import BeaconCore
import Synchronization

/// The bounded queue between a reading thread and the pipeline: an `AsyncStream` that keeps the newest
/// `capacity` events; when the consumer falls behind, the oldest queued event is dropped and counted.
final class CapturedEventQueue: Sendable {
    let stream: AsyncStream<CapturedHCIEvent>
    private let continuation: AsyncStream<CapturedHCIEvent>.Continuation
    private let deliveredCount = Atomic<UInt64>(0)
    private let droppedCount = Atomic<UInt64>(0)

    init(capacity: Int) {
        precondition(capacity > 0, "queue capacity must be positive")
        (stream, continuation) = AsyncStream.makeStream(of: CapturedHCIEvent.self,
                                                        bufferingPolicy: .bufferingNewest(capacity))
    }

    /// Queues an event; never blocks. Returns false once the stream has finished.
    @discardableResult
    func push(_ event: CapturedHCIEvent) -> Bool {
        switch continuation.yield(event) {
        case .enqueued:
            deliveredCount.add(1, ordering: .relaxed)
            return true
        case .dropped:
            // The newest was queued and the oldest dropped.
            deliveredCount.add(1, ordering: .relaxed)
            droppedCount.add(1, ordering: .relaxed)
            return true
        case .terminated:
            return false
        @unknown default:
            return false
        }
    }

    func finish() { continuation.finish() }

    /// Called once when the consumer stops listening or the stream finishes.
    func onTermination(_ handler: @escaping @Sendable () -> Void) {
        continuation.onTermination = { _ in handler() }
    }

    /// Events queued (including those dropped later).
    var delivered: UInt64 { deliveredCount.load(ordering: .relaxed) }
    /// Oldest events dropped because the consumer fell behind.
    var dropped: UInt64 { droppedCount.load(ordering: .relaxed) }
}
