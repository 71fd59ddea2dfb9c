/// Decides when a message the broker keeps refusing is moved aside (dead-lettered) so the messages behind it
/// can flow. Pure state; the publisher reports what happened and performs the decision.
///
/// - A permanent refusal (`PublishRefusal.permanent`) dead-letters at once.
/// - A transient refusal is retried; the `maxAttempts`-th refusal of the same message dead-letters it.
/// - MQTT 3.1.1 has no reason codes: a broker that will not take a message (larger than its
///   `max_packet_size`, an ACL with disconnect-on-deny) closes the connection. A drop counts against the
///   oldest unacknowledged message only when it came within `suspectWindow` seconds of that message being sent;
///   an acknowledgement of the message clears its count. A link that merely flaps drops at random moments and
///   the oldest message is delivered on the next connection, so its count never builds up.
public struct RefusalTracker: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        /// Keep it in the outbox and send it again (attempt number so far).
        case retry(attempts: Int)
        /// Move it to the dead-letter table with this refusal.
        case deadLetter(PublishRefusal, attempts: Int)
    }

    public let maxAttempts: Int
    public let suspectWindow: Double
    /// Refusal counts by sequence number; only messages refused and not yet accepted (a handful at most).
    public private(set) var attempts: [UInt64: Int] = [:]

    /// Bound on `attempts`: entries beyond it (oldest sequence first) are forgotten.
    public static let trackedLimit = 1024

    public init(maxAttempts: Int = 5, suspectWindow: Double = 2) {
        self.maxAttempts = max(1, maxAttempts)
        self.suspectWindow = suspectWindow
    }

    /// The library or the broker refused the message with this sequence number.
    public mutating func refused(_ sequence: UInt64, _ refusal: PublishRefusal) -> Decision {
        let count = (attempts[sequence] ?? 0) + 1
        if refusal.permanent || count >= maxAttempts {
            attempts.removeValue(forKey: sequence)
            return .deadLetter(refusal, attempts: count)
        }
        attempts[sequence] = count
        trim()
        return .retry(attempts: count)
    }

    /// The connection broke while `oldest` was the oldest unacknowledged message, sent `secondsSinceSent`
    /// before the drop. Nil: the drop says nothing about that message.
    public mutating func connectionDropped(oldest sequence: UInt64, secondsSinceSent: Double) -> Decision? {
        guard secondsSinceSent >= 0, secondsSinceSent <= suspectWindow else { return nil }
        let count = (attempts[sequence] ?? 0) + 1
        if count >= maxAttempts {
            attempts.removeValue(forKey: sequence)
            return .deadLetter(.connectionDropped(attempts: count), attempts: count)
        }
        attempts[sequence] = count
        trim()
        return .retry(attempts: count)
    }

    /// The broker accepted the message: forget its count.
    public mutating func accepted(_ sequence: UInt64) {
        if !attempts.isEmpty { attempts.removeValue(forKey: sequence) }
    }

    private mutating func trim() {
        guard attempts.count > RefusalTracker.trackedLimit else { return }
        for sequence in attempts.keys.sorted().prefix(attempts.count - RefusalTracker.trackedLimit) {
            attempts.removeValue(forKey: sequence)
        }
    }
}
