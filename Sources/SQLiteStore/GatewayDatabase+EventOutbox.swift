import BeaconCore

extension GatewayDatabase: EventOutbox {
    public func append(_ envelopes: [EventEnvelope]) async throws {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.append(envelopes) }
    }

    public func peek(after sequence: UInt64?, limit: Int) async throws -> [EventEnvelope] {
        try await perform { (connection) throws(SQLiteError) in
            try connection.outbox.peek(after: sequence, limit: limit)
        }
    }

    public func delete(_ sequences: [UInt64]) async throws {
        try await perform { (connection) throws(SQLiteError) in try connection.outbox.delete(sequences) }
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
