import Testing

@testable import BeaconDelivery
@testable import BeaconEvents

@Suite struct MemoryOutboxTests {
    func envelope(_ sequence: UInt64, _ kind: EventKind = .region, time: Double = 100) -> EventEnvelope {
        EventEnvelope(
            id: "g-\(sequence)", gatewayID: "g", sequence: sequence, captureTime: time, kind: kind,
            topic: "t", qos: 1, retain: false, payload: "0123456789")
    }

    @Test func keepsSequenceOrderAndEvictsSightingsFirst() async {
        let outbox = MemoryOutbox(maxRows: 4)
        await outbox.append([envelope(3), envelope(1, .sighting), envelope(2)])
        await outbox.append([envelope(5), envelope(4)])
        #expect(await outbox.peek(after: nil, limit: 10).map(\.sequence) == [2, 3, 4, 5])
        await outbox.append([envelope(6)])
        #expect(await outbox.peek(after: 3, limit: 10).map(\.sequence) == [4, 5, 6])
        #expect(await outbox.stats().dropped[.rowCap] == 2)
    }

    @Test func expiresAndDeletes() async {
        let outbox = MemoryOutbox(maxRows: 10, maxBytes: 1000)
        await outbox.append([
            envelope(1, .sighting, time: 10), envelope(2, .presence, time: 10), envelope(3, .sighting, time: 50),
        ])
        await outbox.expire(before: 20)
        await outbox.delete([3])
        let stats = await outbox.stats()
        #expect(await outbox.peek(after: nil, limit: 10).map(\.sequence) == [2])
        #expect(stats.rows == 1 && stats.bytes == 10 && stats.dropped[.expired] == 1)
    }
}
