import BeaconDelivery
import BeaconRuntime

/// The `dead_letter` table: events the broker refused (docs/outbox.md), kept with the reason until an operator
/// requeues them (`beaconbridge outbox --requeue`).
extension Outbox {
    /// Stores the letters and removes their rows from the outbox (with other sinks configured: from the primary
    /// sink's backlog only, the others still send them), in one transaction; keeps the newest
    /// `DeadLetter.maxKept` (older ones are dropped, counted as `dead_letter_cap`).
    public func deadLetter(_ letters: [DeadLetter]) throws(SQLiteError) {
        guard !letters.isEmpty else { return }
        do throws(SQLiteError) {
            try database.transaction { () throws(SQLiteError) in
                let insert = try database.statement(
                    """
                    INSERT OR REPLACE INTO dead_letter (seq, gateway, kind, expires, topic, qos, retain, payload,
                        capture_time, reason, attempts, dead_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                let remove = try database.statement("DELETE FROM outbox WHERE seq = ? RETURNING length(payload)")
                for letter in letters {
                    let envelope = letter.envelope
                    Outbox.bindEnvelope(envelope, to: insert)
                    insert.bind(letter.reason, at: 10)
                    insert.bind(Int64(letter.attempts), at: 11)
                    insert.bind(letter.time, at: 12)
                    try insert.step()
                    insert.reset()
                    if sinks.count > 1 {
                        // The other sinks still send it: it only leaves the primary sink's backlog.
                        try settle([envelope.sequence], by: Outbox.primarySink)
                        continue
                    }
                    remove.bind(Int64(clamping: envelope.sequence), at: 1)
                    if try remove.step() {
                        rows -= 1
                        bytes -= Int(remove.int64(at: 0))
                        _ = try remove.step()
                    }
                    remove.reset()
                }
                var count = Int(try database.scalar("SELECT count(*) FROM dead_letter") ?? 0)
                if count > DeadLetter.maxKept {
                    let excess = count - DeadLetter.maxKept
                    try database.execute(
                        """
                        DELETE FROM dead_letter WHERE seq IN (SELECT seq FROM dead_letter ORDER BY seq LIMIT \(excess))
                        """)
                    dropped[.deadLetterCap, default: 0] += excess
                    count -= excess
                }
                deadLetterCount = count
            }
        } catch {
            try? recount()
            throw error
        }
    }

    /// Up to `limit` dead letters, in sequence order.
    public func deadLetters(limit: Int) throws(SQLiteError) -> [DeadLetter] {
        let statement = try database.statement(
            """
            SELECT seq, gateway, kind, topic, qos, retain, payload, capture_time, reason, attempts, dead_at
            FROM dead_letter ORDER BY seq LIMIT ?
            """)
        defer { statement.reset() }
        statement.bind(Int64(max(0, limit)), at: 1)
        var out: [DeadLetter] = []
        while try statement.step() {
            out.append(
                DeadLetter(
                    envelope: Outbox.envelope(from: statement), reason: statement.string(at: 8),
                    attempts: Int(statement.int64(at: 9)), time: statement.double(at: 10)))
        }
        return out
    }

    /// Moves every dead letter back into the outbox, in one transaction (the bounds apply); returns how many.
    public func requeueDeadLetters() throws(SQLiteError) -> Int {
        let created = SystemClock.realtime()
        var moved = 0
        do throws(SQLiteError) {
            try database.transaction { () throws(SQLiteError) in
                moved = Int(try database.scalar("SELECT count(*) FROM dead_letter") ?? 0)
                try database.execute(
                    """
                    DELETE FROM outbox_ack WHERE sink = '\(Outbox.primarySink)'
                        AND seq IN (SELECT seq FROM dead_letter);
                    INSERT OR IGNORE INTO outbox (seq, gateway, kind, expires, topic, qos, retain, payload, capture_time,
                        created) SELECT seq, gateway, kind, expires, topic, qos, retain, payload, capture_time, \(created)
                    FROM dead_letter;
                    DELETE FROM dead_letter;
                    """)
                try recount()
                deadLetterCount = 0
                try evictOverflow()
            }
        } catch {
            try? recount()
            throw error
        }
        return moved
    }
}
