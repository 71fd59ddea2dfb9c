/// Why the outbox dropped an event.
public enum OutboxDropReason: String, Sendable, Hashable, CaseIterable {
    /// A sighting-like row older than `outbox.sighting_max_age_s`.
    case expired
    /// Evicted to stay under `outbox.max_rows` (or `memory_max_rows`).
    case rowCap = "row_cap"
    /// Evicted to stay under `outbox.max_bytes`.
    case byteCap = "byte_cap"
    /// A dead letter removed to keep the dead-letter table under `DeadLetter.maxKept` rows.
    case deadLetterCap = "dead_letter_cap"
    /// Held by an outbox file that was deleted, truncated or replaced while running and could not be copied.
    case fileLost = "file_lost"
}

/// Backlog size and the drops counted since the outbox was opened.
public struct OutboxStats: Sendable, Equatable {
    public var rows: Int
    public var bytes: Int
    public var dropped: [OutboxDropReason: Int]
    /// Rows in the dead-letter table.
    public var deadLetters: Int
    public init(rows: Int = 0, bytes: Int = 0, dropped: [OutboxDropReason: Int] = [:], deadLetters: Int = 0) {
        self.rows = rows
        self.bytes = bytes
        self.dropped = dropped
        self.deadLetters = deadLetters
    }
}
