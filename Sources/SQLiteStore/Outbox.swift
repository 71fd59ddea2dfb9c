import BeaconDelivery
import BeaconEvents
import BeaconModel

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// The `outbox` table: envelopes waiting for the broker, in sequence (capture) order, bounded by rows and
/// bytes (docs/outbox.md). Synchronous and not Sendable: `GatewayDatabase` confines it to its serial queue;
/// the bench and tests may use it directly on one thread.
public final class Outbox {
    let database: SQLiteDatabase
    public let maxRows: Int
    public let maxBytes: Int
    public internal(set) var rows: Int
    public internal(set) var bytes: Int
    public internal(set) var dropped: [OutboxDropReason: Int] = [:]
    /// Rows in the `dead_letter` table (`Outbox+DeadLetters.swift`).
    public internal(set) var deadLetterCount: Int
    /// The configured sinks, the primary (`Outbox.primarySink`) first (`Outbox+Sinks.swift`).
    public internal(set) var sinks: [String] = [Outbox.primarySink]

    public init(database: SQLiteDatabase, maxRows: Int, maxBytes: Int) throws(SQLiteError) {
        self.database = database
        self.maxRows = max(1, maxRows)
        self.maxBytes = max(1, maxBytes)
        let statement = try database.statement("SELECT count(*), coalesce(sum(length(payload)), 0) FROM outbox")
        defer { statement.reset() }
        _ = try statement.step()
        rows = Int(statement.int64(at: 0))
        bytes = Int(statement.int64(at: 1))
        deadLetterCount = Int(try database.scalar("SELECT count(*) FROM dead_letter") ?? 0)
    }

    public var stats: OutboxStats {
        OutboxStats(rows: rows, bytes: bytes, dropped: dropped, deadLetters: deadLetterCount)
    }

    /// Inserts the envelopes in one transaction (an envelope whose sequence is already stored is skipped),
    /// then evicts to stay inside the bounds, in the same transaction.
    public func append(_ envelopes: [EventEnvelope]) throws(SQLiteError) {
        guard !envelopes.isEmpty else { return }
        let created = SystemClock.realtime()
        var addedRows = 0
        var addedBytes = 0
        do throws(SQLiteError) {
            try database.transaction { () throws(SQLiteError) in
                let insert = try database.statement(
                    """
                    INSERT OR IGNORE INTO outbox (seq, gateway, kind, expires, topic, qos, retain, payload,
                        capture_time, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for envelope in envelopes {
                    Outbox.bindEnvelope(envelope, to: insert)
                    insert.bind(created, at: 10)
                    try insert.step()
                    insert.reset()
                    if database.changes > 0 {
                        addedRows += 1
                        addedBytes += envelope.payloadSize
                    }
                }
                rows += addedRows
                bytes += addedBytes
                try evictOverflow()
            }
        } catch {
            try? recount()
            throw error
        }
    }

    /// Up to `limit` envelopes with a sequence above `sequence`, in sequence order.
    public func peek(after sequence: UInt64?, limit: Int) throws(SQLiteError) -> [EventEnvelope] {
        let statement = try database.statement(
            """
            SELECT seq, gateway, kind, topic, qos, retain, payload, capture_time FROM outbox
            WHERE seq > ? ORDER BY seq LIMIT ?
            """)
        defer { statement.reset() }
        statement.bind(sequence.map { Int64(clamping: $0) } ?? -1, at: 1)
        statement.bind(Int64(max(0, limit)), at: 2)
        var out: [EventEnvelope] = []
        out.reserveCapacity(min(limit, 4096))
        while try statement.step() { out.append(Outbox.envelope(from: statement)) }
        return out
    }

    /// Binds an envelope to parameters 1-9 in the column order the `outbox` and `dead_letter` tables share:
    /// seq, gateway, kind, expires, topic, qos, retain, payload, capture_time.
    static func bindEnvelope(_ envelope: EventEnvelope, to statement: SQLiteStatement) {
        statement.bind(Int64(clamping: envelope.sequence), at: 1)
        statement.bind(envelope.gatewayID, at: 2)
        statement.bind(envelope.kind.rawValue, at: 3)
        statement.bind(Int64(envelope.kind.expires ? 1 : 0), at: 4)
        statement.bind(envelope.topic, at: 5)
        statement.bind(Int64(envelope.qos), at: 6)
        statement.bind(Int64(envelope.retain ? 1 : 0), at: 7)
        statement.bindBlob(envelope.payload, at: 8)
        statement.bind(envelope.captureTime, at: 9)
    }

    /// The envelope in result columns 0-7: seq, gateway, kind, topic, qos, retain, payload, capture_time.
    static func envelope(from statement: SQLiteStatement) -> EventEnvelope {
        let sequence = UInt64(max(0, statement.int64(at: 0)))
        let gateway = statement.string(at: 1)
        return EventEnvelope(
            id: EventEnvelope.eventID(gatewayID: gateway, sequence: sequence), gatewayID: gateway,
            sequence: sequence, captureTime: statement.double(at: 7),
            kind: EventKind(rawValue: statement.string(at: 2)) ?? .sighting, topic: statement.string(at: 3),
            qos: UInt8(clamping: statement.int64(at: 4)), retain: statement.int64(at: 5) != 0,
            payload: statement.blobString(at: 6))
    }

    /// Deletes acknowledged envelopes in one transaction.
    public func delete(_ sequences: [UInt64]) throws(SQLiteError) {
        guard !sequences.isEmpty else { return }
        try database.transaction { () throws(SQLiteError) in
            let statement = try database.statement("DELETE FROM outbox WHERE seq = ? RETURNING length(payload)")
            for sequence in sequences {
                statement.bind(Int64(clamping: sequence), at: 1)
                if try statement.step() {
                    rows -= 1
                    bytes -= Int(statement.int64(at: 0))
                    _ = try statement.step()
                }
                statement.reset()
            }
        }
    }

    /// Drops expiring rows captured before `captureTime`, counted as `expired`.
    public func expire(before captureTime: Timestamp) throws(SQLiteError) {
        let statement = try database.statement(
            """
            DELETE FROM outbox WHERE expires = 1 AND capture_time < ? RETURNING length(payload)
            """)
        defer { statement.reset() }
        statement.bind(captureTime, at: 1)
        var count = 0
        try database.transaction { () throws(SQLiteError) in
            while try statement.step() {
                count += 1
                bytes -= Int(statement.int64(at: 0))
            }
        }
        rows -= count
        if count > 0 { dropped[.expired, default: 0] += count }
    }

    /// Evicts the oldest expiring rows, then the oldest rows of any kind, until inside both caps.
    func evictOverflow() throws(SQLiteError) {
        for onlyExpiring in [true, false] {
            while let reason = OutboxEviction.overflow(rows: rows, bytes: bytes, maxRows: maxRows, maxBytes: maxBytes) {
                let select = try database.statement(
                    onlyExpiring
                        ? "SELECT seq, length(payload) FROM outbox WHERE expires = 1 ORDER BY seq LIMIT ?"
                        : "SELECT seq, length(payload) FROM outbox ORDER BY seq LIMIT ?")
                select.bind(Int64(rows > maxRows ? min(4096, rows - maxRows) : 256), at: 1)
                var victims: [(Int64, Int)] = []
                var freed = 0
                while try select.step() {
                    victims.append((select.int64(at: 0), Int(select.int64(at: 1))))
                    freed += victims.last!.1
                    if rows - victims.count <= maxRows && bytes - freed <= maxBytes { break }
                }
                select.reset()
                if victims.isEmpty { break }
                let delete = try database.statement("DELETE FROM outbox WHERE seq = ?")
                for (sequence, size) in victims {
                    delete.bind(sequence, at: 1)
                    try delete.step()
                    delete.reset()
                    rows -= 1
                    bytes -= size
                    let counted =
                        OutboxEviction.overflow(
                            rows: rows + 1, bytes: bytes + size, maxRows: maxRows,
                            maxBytes: maxBytes) ?? reason
                    dropped[counted, default: 0] += 1
                }
            }
        }
    }

    func recount() throws(SQLiteError) {
        let statement = try database.statement("SELECT count(*), coalesce(sum(length(payload)), 0) FROM outbox")
        defer { statement.reset() }
        _ = try statement.step()
        rows = Int(statement.int64(at: 0))
        bytes = Int(statement.int64(at: 1))
        deadLetterCount = Int(try database.scalar("SELECT count(*) FROM dead_letter") ?? 0)
    }
}
