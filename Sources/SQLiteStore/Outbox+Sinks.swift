import BeaconEvents

/// A cursor per sink (docs/outbox.md, "Sinks"): each configured sink (`mqtt`, `webhook`) reads the rows it has
/// not acknowledged yet, and a row is deleted once every configured sink has acknowledged it (or it ages out or
/// is evicted under the bounds, for every sink at once). With one sink (MQTT alone, the default) an
/// acknowledgement deletes the row at once, exactly as before sinks had cursors: no `outbox_ack` row is written.
extension Outbox {
    /// The sink whose acknowledgements and reads come through `EventOutbox.delete` and `peek` (the MQTT
    /// publisher's delivery machine).
    public static let primarySink = "mqtt"

    /// Sets the configured sinks (the primary first), then deletes the rows every one of them has acknowledged
    /// (a sink removed from the configuration no longer holds rows back). Returns how many rows were deleted.
    @discardableResult
    public func setSinks(_ names: [String]) throws(SQLiteError) -> Int {
        var unique: [String] = []
        for name in names where !unique.contains(name) { unique.append(name) }
        sinks = unique.isEmpty ? [Outbox.primarySink] : unique
        var count = 0
        try database.transaction { () throws(SQLiteError) in
            let statement = try database.statement(
                """
                DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox_ack WHERE sink IN (\(sinkList))
                    GROUP BY seq HAVING count(*) >= \(sinks.count)) RETURNING length(payload)
                """)
            defer { statement.reset() }
            while try statement.step() {
                count += 1
                bytes -= Int(statement.int64(at: 0))
            }
            rows -= count
            // Acknowledgements of sinks no longer configured mean nothing now.
            try database.execute("DELETE FROM outbox_ack WHERE sink NOT IN (\(sinkList))")
        }
        return count
    }

    /// The configured sinks as an SQL list of string literals (names are validated identifiers; quotes doubled
    /// all the same).
    var sinkList: String {
        sinks.map { "'" + $0.replacingQuotes() + "'" }.joined(separator: ", ")
    }

    /// Up to `limit` rows with a sequence above `sequence` that `sink` has not acknowledged, in sequence order.
    public func peek(for sink: String, after sequence: UInt64?, limit: Int) throws(SQLiteError) -> [EventEnvelope] {
        if sinks.count == 1 { return try peek(after: sequence, limit: limit) }
        let statement = try database.statement(
            """
            SELECT seq, gateway, kind, topic, qos, retain, payload, capture_time FROM outbox o
            WHERE seq > ? AND NOT EXISTS (SELECT 1 FROM outbox_ack a WHERE a.seq = o.seq AND a.sink = ?)
            ORDER BY seq LIMIT ?
            """)
        defer { statement.reset() }
        statement.bind(sequence.map { Int64(clamping: $0) } ?? -1, at: 1)
        statement.bind(sink, at: 2)
        statement.bind(Int64(max(0, limit)), at: 3)
        var out: [EventEnvelope] = []
        while try statement.step() { out.append(Outbox.envelope(from: statement)) }
        return out
    }

    /// Records that `sink` acknowledged the rows, in one transaction; a row every configured sink has now
    /// acknowledged is deleted. With one sink this is `delete(_:)`.
    public func acknowledge(_ sequences: [UInt64], by sink: String) throws(SQLiteError) {
        guard !sequences.isEmpty else { return }
        if sinks.count == 1 { return try delete(sequences) }
        try database.transaction { () throws(SQLiteError) in try settle(sequences, by: sink) }
    }

    /// Rows `sink` has not acknowledged yet (its backlog), when more than one sink is configured; `rows` otherwise.
    public func backlog(of sink: String) throws(SQLiteError) -> Int {
        if sinks.count == 1 { return rows }
        let statement = try database.statement(
            """
            SELECT count(*) FROM outbox o
            WHERE NOT EXISTS (SELECT 1 FROM outbox_ack a WHERE a.seq = o.seq AND a.sink = ?)
            """)
        defer { statement.reset() }
        statement.bind(sink, at: 1)
        _ = try statement.step()
        return Int(statement.int64(at: 0))
    }

    /// Inside a transaction: marks the rows acknowledged by `sink` and deletes those every configured sink has
    /// acknowledged (the trigger `outbox_ack_cleanup` removes their marks).
    func settle(_ sequences: [UInt64], by sink: String) throws(SQLiteError) {
        let mark = try database.statement(
            "INSERT OR IGNORE INTO outbox_ack (seq, sink) SELECT seq, ? FROM outbox WHERE seq = ?")
        let remove = try database.statement(
            """
            DELETE FROM outbox WHERE seq = ?
                AND (SELECT count(*) FROM outbox_ack WHERE seq = ? AND sink IN (\(sinkList))) >= \(sinks.count)
            RETURNING length(payload)
            """)
        for sequence in sequences {
            let value = Int64(clamping: sequence)
            mark.bind(sink, at: 1)
            mark.bind(value, at: 2)
            try mark.step()
            mark.reset()
            remove.bind(value, at: 1)
            remove.bind(value, at: 2)
            if try remove.step() {
                rows -= 1
                bytes -= Int(remove.int64(at: 0))
                _ = try remove.step()
            }
            remove.reset()
        }
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var out = ""
        for character in self { out += character == "'" ? "''" : String(character) }
        return out
    }
}
