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
