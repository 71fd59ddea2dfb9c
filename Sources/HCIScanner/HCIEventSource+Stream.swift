import BeaconFormats
import BeaconRuntime
import Synchronization

extension HCIEventSource {
    /// Starts the source and returns its events one at a time, for consumers that take them singly (`scan`,
    /// tests). Up to `capacity` events wait in a mailbox between the source and the stream: a live scanner
    /// then drops its oldest (counted in `statistics`), a replay waits. The stream finishes when the source
    /// does, and at once after `stop()` (events still waiting are not handed out); dropping the stream stops a
    /// live scanner (its sink refuses more).
    public func events(capacity: Int = 1024) async throws -> AsyncStream<CapturedHCIEvent> {
        let mailbox = EventMailbox<Never>(capacity: capacity)
        try await start(into: mailbox)
        let reader = MailboxReader(mailbox)
        return AsyncStream(
            unfolding: { [self] in
                guard !isStopped else { return nil }
                return await reader.next()
            }, onCancel: { mailbox.close() })
    }
}

/// The stream's side of the mailbox: the batch being handed out one event at a time. One consumer (the
/// stream's iterator); closes the mailbox when the stream is gone.
private final class MailboxReader: Sendable {
    private let mailbox: EventMailbox<Never>
    private let buffered = Mutex<(events: [CapturedHCIEvent], next: Int)>(([], 0))

    init(_ mailbox: EventMailbox<Never>) { self.mailbox = mailbox }

    deinit { mailbox.close() }

    func next() async -> CapturedHCIEvent? {
        while true {
            let event = buffered.withLock { state -> CapturedHCIEvent? in
                guard state.next < state.events.count else { return nil }
                defer { state.next += 1 }
                return state.events[state.next]
            }
            if let event { return event }
            // No controls are ever posted to this mailbox: only batches, then the end.
            guard case let .events(batches) = await mailbox.next() else { return nil }
            buffered.withLock { $0 = (batches.flatMap { $0 }, 0) }
        }
    }
}
