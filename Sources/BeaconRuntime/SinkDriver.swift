import BeaconDelivery
import Synchronization

/// Runs one cursor-driven sink (the webhook): performs the actions of its `SinkCursor` machine on the outbox
/// and the sink, feeds the results back, and sleeps until the machine's deadline (at most `pollInterval` while
/// idle, so events stored by the daemon reach the sink within about half a second). One task owns it (`run()`,
/// under the daemon's service group); the figures are readable from any task (`counters`).
public final class SinkDriver: Sendable {
    public let sink: any EventSink
    let outbox: any SinkOutbox
    let settings: SinkCursor.Settings
    let onNotice: @Sendable (SinkNotice) -> Void
    private let figures = Mutex(SinkCounters())

    public init(
        sink: any EventSink, outbox: any SinkOutbox, settings: SinkCursor.Settings,
        onNotice: @escaping @Sendable (SinkNotice) -> Void = { _ in }
    ) {
        self.sink = sink
        self.outbox = outbox
        self.settings = settings
        self.onNotice = onNotice
    }

    /// The machine's figures as of its last step.
    public var counters: SinkCounters { figures.withLock { $0 } }

    /// Delivers until the task is cancelled. A hand-over in flight when it is cancelled finishes first (the
    /// sink bounds it: `webhook.timeout_s`); whatever is not acknowledged stays in the outbox for the next run.
    public func run() async {
        var machine = SinkCursor(settings: settings)
        var pending = machine.handle(.wake, now: SystemClock.monotonic())
        while !Task.isCancelled {
            while !pending.isEmpty, !Task.isCancelled {
                let action = pending.removeFirst()
                if let answer = await perform(action, state: machine.state) {
                    pending += machine.handle(answer, now: SystemClock.monotonic())
                }
            }
            figures.withLock { $0 = machine.counters }
            let now = SystemClock.monotonic()
            let wait = min(max(0, (machine.deadline ?? now + settings.pollInterval) - now), settings.pollInterval)
            if wait > 0 {
                do { try await Task.sleep(for: .milliseconds(Int(wait * 1000) + 1)) } catch { break }
            }
            pending += machine.handle(.tick, now: SystemClock.monotonic())
        }
        figures.withLock { $0 = machine.counters }
    }

    /// Performs one action; returns the answer the machine expects, if any.
    private func perform(_ action: SinkCursor.Action, state: SinkCursor.State) async -> SinkCursor.Input? {
        switch action {
        case let .read(after, limit):
            // A failure answered earlier in the same list moved the machine on: this read is no longer wanted.
            guard state == .reading else { return nil }
            do { return .rows(try await outbox.peek(for: sink.name, after: after, limit: limit)) } catch {
                return .outboxFailed("\(error)")
            }
        case let .deliver(messages):
            return .delivered(await sink.publish(messages))
        case let .acknowledge(sequences):
            do { try await outbox.acknowledge(sequences, by: sink.name) } catch { return .outboxFailed("\(error)") }
            return nil
        case let .notify(notice):
            onNotice(notice)
            return nil
        }
    }
}
