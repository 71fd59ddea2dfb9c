import BeaconDelivery
import BeaconEvents
import Foundation
import SQLiteStore
import TestSupport
import Testing

/// `beaconbridge outbox`: the backlog and the dead letters of the configured database, and `--requeue`.
@Suite struct OutboxCommandTests {
    @Test func listsDeadLettersAndRequeuesThem() async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        let missing = try await BuiltBinary.run(["outbox", "--config", bed.configPath])
        #expect(missing.status == 66, "stderr: \(missing.stderr)")
        #expect(missing.stderr.contains("no outbox database at \(bed.outboxPath)"))

        let refused = EventEnvelope(
            id: "testgw-7", gatewayID: "testgw", sequence: 7, captureTime: 1_700_000_000,
            kind: .region, topic: "beaconbridge/testgw/region/desk/keys", qos: 1, retain: true,
            payload: #"{"kind":"region"}"#)
        let waiting = EventEnvelope(
            id: "testgw-8", gatewayID: "testgw", sequence: 8, captureTime: 1_700_000_001,
            kind: .presence, topic: "beaconbridge/testgw/presence/keys", qos: 1, retain: true,
            payload: #"{"kind":"presence"}"#)
        do {
            let database = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath))
            try await database.append([waiting])
            try await database.deadLetter([
                DeadLetter(
                    envelope: refused, reason: "broker refused: not authorized (0x87)",
                    attempts: 1, time: 1_764_590_400)
            ])
        }
        let listed = try await BuiltBinary.run(["outbox", "--config", bed.configPath])
        #expect(listed.status == 0, "stderr: \(listed.stderr)")
        #expect(
            listed.lines.first == "\(bed.outboxPath): 1 event waiting (\(waiting.payloadSize) bytes), 1 dead letter")
        #expect(
            listed.lines.dropFirst().first
                == #"  seq=7 time=2025-12-01T12:00:00.000Z kind=region topic=beaconbridge/testgw/region/desk/keys bytes=17 attempts=1 reason="broker refused: not authorized (0x87)""#
        )

        let requeued = try await BuiltBinary.run(["outbox", "--config", bed.configPath, "--requeue"])
        #expect(requeued.status == 0)
        #expect(requeued.lines.first == "requeued 1 dead letter into the outbox")
        #expect(
            requeued.lines.dropFirst().first
                == "\(bed.outboxPath): 2 events waiting (\(waiting.payloadSize + refused.payloadSize) bytes), 0 dead letters"
        )
        let database = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath))
        #expect(try await database.peek(after: nil, limit: 10).map(\.sequence) == [7, 8])

        #expect(try await BuiltBinary.run(["outbox", "--config", bed.configPath, "--limit"]).status == 64)
        #expect(try await BuiltBinary.run(["outbox", "--config", bed.configPath, "--frobnicate"]).status == 64)
    }
}
