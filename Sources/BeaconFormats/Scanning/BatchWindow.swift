/// How long the live reading thread lets reports gather in the kernel after handing a batch over
/// (`scanner.batch_window_ms` ... `scanner.batch_window_max_ms`, docs/scanner.md).
///
/// Every hand-over costs about the same fixed amount (the reading thread's wake-up, the loop's, the network
/// thread's write), whatever the batch holds, so at low report rates those fixed costs, not the reports, set the
/// gateway's CPU. The window therefore aims at `targetEvents` events per wake-up: after a batch of `n` events that
/// gathered over `elapsed` seconds (since the previous read), the next window is the time `targetEvents` take at
/// that rate, `targetEvents * elapsed / n`, kept between `minimum` and `maximum`. At high rates it stays at the
/// minimum (batches are large anyway); at low rates it grows to the maximum, the most a report waits before it
/// is read. Pure: the caller passes the times.
public struct BatchWindow: Sendable, Equatable {
    /// Seconds: the shortest window (`batch_window_ms`).
    public let minimum: Double
    /// Seconds: the longest window (`batch_window_max_ms`, at least `minimum`).
    public let maximum: Double
    /// Events per wake-up the window aims at.
    public let targetEvents: Int

    public static let defaultTargetEvents = 64

    /// Non-finite or negative bounds count as 0; a maximum below the minimum is the minimum (no growth).
    public init(minimum: Double, maximum: Double, targetEvents: Int = BatchWindow.defaultTargetEvents) {
        let low = minimum.isFinite ? max(0, minimum) : 0
        self.minimum = low
        self.maximum = maximum.isFinite ? max(low, maximum) : low
        self.targetEvents = max(1, targetEvents)
    }

    /// The window after a batch of `events` events that gathered over `elapsed` seconds (from the previous
    /// read to this one). No events, or no measurable time: the window cannot be judged, the maximum holds (a
    /// report after a quiet spell is the first of a low rate).
    public func next(events: Int, elapsed: Double) -> Double {
        guard events > 0, elapsed.isFinite, elapsed > 0 else { return maximum }
        let wanted = Double(targetEvents) * elapsed / Double(events)
        return min(maximum, max(minimum, wanted))
    }
}
