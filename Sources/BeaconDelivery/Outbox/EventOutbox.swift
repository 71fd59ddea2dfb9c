import BeaconEvents
import BeaconModel

/// Durable (or, as a fallback, in-memory) queue of envelopes waiting for the broker. Implemented by the
/// SQLite outbox (SQLiteStore) and by `MemoryOutbox`. Rows come back in sequence (= capture) order and
/// leave only through `delete` (after the broker acknowledged them), `expire`, the bounds or `deadLetter`
/// (the broker refused them).
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
    /// Moves envelopes the broker will not accept into the dead-letter table (removing them from the outbox
    /// where stored there), in one transaction. The table keeps the newest `DeadLetter.maxKept`; older ones are
    /// dropped and counted as `dead_letter_cap`.
    func deadLetter(_ letters: [DeadLetter]) async throws
    /// Up to `limit` dead letters, in sequence order.
    func deadLetters(limit: Int) async throws -> [DeadLetter]
    /// Moves every dead letter back into the outbox (to be sent again, in sequence order); returns how many.
    func requeueDeadLetters() async throws -> Int
}
