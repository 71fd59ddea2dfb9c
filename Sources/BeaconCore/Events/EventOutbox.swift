/// Durable (or, as a fallback, in-memory) queue of envelopes waiting for the broker. Implemented by the
/// SQLite outbox (SQLiteStore) and by `MemoryOutbox`. Rows come back in sequence (= capture) order and
/// leave only through `delete` (after the broker acknowledged them), `expire` or the bounds.
public protocol EventOutbox: Sendable {
    /// Stores envelopes in one transaction, then enforces the bounds (dropping rows and counting them).
    func append(_ envelopes: [EventEnvelope]) async throws
    /// Up to `limit` envelopes with a sequence above `sequence` (all when nil), in sequence order.
    func peek(after sequence: UInt64?, limit: Int) async throws -> [EventEnvelope]
    /// Removes acknowledged envelopes.
    func delete(_ sequences: [UInt64]) async throws
    /// Drops expiring kinds (`EventKind.expires`) captured before `captureTime`; counted as `expired`.
    func expire(before captureTime: Timestamp) async throws
    func stats() async throws -> OutboxStats
}

/// Why the outbox dropped an event.
public enum OutboxDropReason: String, Sendable, Hashable, CaseIterable {
    /// A sighting-like row older than `outbox.sighting_max_age_s`.
    case expired
    /// Evicted to stay under `outbox.max_rows` (or `memory_max_rows`).
    case rowCap = "row_cap"
    /// Evicted to stay under `outbox.max_bytes`.
    case byteCap = "byte_cap"
}

/// Backlog size and the drops counted since the outbox was opened.
public struct OutboxStats: Sendable, Equatable {
    public var rows: Int
    public var bytes: Int
    public var dropped: [OutboxDropReason: Int]
    public init(rows: Int = 0, bytes: Int = 0, dropped: [OutboxDropReason: Int] = [:]) {
        self.rows = rows; self.bytes = bytes; self.dropped = dropped
    }
}

/// The eviction rule shared by every outbox: while over a cap, drop the oldest expiring row (sightings go
/// first: stale RSSI is worth least), and only when none is left the oldest row of any kind.
public enum OutboxEviction {
    /// Which cap is exceeded, if any.
    public static func overflow(rows: Int, bytes: Int, maxRows: Int, maxBytes: Int) -> OutboxDropReason? {
        if rows > maxRows { return .rowCap }
        if bytes > maxBytes { return .byteCap }
        return nil
    }
}
