import BeaconEvents

/// An event the broker would not accept, moved out of the outbox so the events behind it flow (docs/outbox.md).
/// Kept, with why, until an operator requeues or clears it (`beaconbridge outbox`).
public struct DeadLetter: Sendable, Equatable {
    public var envelope: EventEnvelope
    public var reason: String
    public var attempts: Int
    /// Wall clock (seconds since the epoch) when it was moved aside.
    public var time: Double

    /// How many dead letters an outbox keeps (the oldest beyond it are dropped, counted as `dead_letter_cap`).
    public static let maxKept = 10_000

    public init(envelope: EventEnvelope, reason: String, attempts: Int, time: Double) {
        self.envelope = envelope
        self.reason = reason
        self.attempts = attempts
        self.time = time
    }
}
