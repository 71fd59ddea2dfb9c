import BeaconDelivery
import BeaconEvents
import BeaconModel

extension GatewayDatabase: EventOutbox {
    public func append(_ envelopes: [EventEnvelope]) async throws {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.append(envelopes) }
    }

    public func peek(after sequence: UInt64?, limit: Int) async throws -> [EventEnvelope] {
        try await perform { (connection) throws(SQLiteError) in
            try connection.outbox.peek(for: Outbox.primarySink, after: sequence, limit: limit)
        }
    }

    /// The primary sink's (MQTT's) acknowledgement: deletes the rows at once when it is the only sink.
    public func delete(_ sequences: [UInt64]) async throws {
        try await perform { (connection) throws(SQLiteError) in
            try connection.outbox.acknowledge(sequences, by: Outbox.primarySink)
        }
    }

    public func expire(before captureTime: Timestamp) async throws {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.expire(before: captureTime) }
    }

    public func stats() async throws -> OutboxStats {
        try await perform { connection in connection.outbox.stats }
    }
}

extension GatewayDatabase {
    public func deadLetter(_ letters: [DeadLetter]) async throws {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.deadLetter(letters) }
    }

    public func deadLetters(limit: Int) async throws -> [DeadLetter] {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.deadLetters(limit: limit) }
    }

    public func requeueDeadLetters() async throws -> Int {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.requeueDeadLetters() }
    }
}

/// A cursor per sink (`Outbox+Sinks.swift`, docs/outbox.md "Sinks").
extension GatewayDatabase: SinkOutbox {
    /// Sets the configured sinks (the primary, `mqtt`, first); kept across a file recovery. Returns the rows
    /// deleted because every configured sink had acknowledged them.
    @discardableResult
    public func setSinks(_ names: [String]) async throws -> Int {
        try await perform { (connection) throws(SQLiteError) in
            let deleted = try connection.outbox.setSinks(names)
            self.sinkNames = connection.outbox.sinks
            return deleted
        }
    }

    /// Up to `limit` rows after `sequence` that `sink` has not acknowledged, in sequence order.
    public func peek(for sink: String, after sequence: UInt64?, limit: Int) async throws -> [EventEnvelope] {
        try await perform { (connection) throws(SQLiteError) in
            try connection.outbox.peek(for: sink, after: sequence, limit: limit)
        }
    }

    /// `sink` acknowledged the rows; those every configured sink acknowledged are deleted.
    public func acknowledge(_ sequences: [UInt64], by sink: String) async throws {
        try await perform { (connection) throws(SQLiteError) in
            try connection.outbox.acknowledge(sequences, by: sink)
        }
    }

    /// Rows `sink` has not acknowledged.
    public func backlog(of sink: String) async throws -> Int {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.backlog(of: sink) }
    }
}
