import BeaconDelivery
import BeaconEvents
import Foundation
import SQLiteStore
import TestSupport
import Testing

/// Issue 17.7: `replay` started on an existing backlog delivers it (waiting while delivery makes progress)
/// instead of exiting 0 after about one in-flight window with the outbox still full; when it cannot deliver
/// (no broker) it exits 75 (EX_TEMPFAIL) with the rows still in the outbox.
@Suite(.serialized) struct ReplayBacklogTests {
    static let rows = 200_000

    /// Fills the bed's outbox with `rows` region events of an earlier run.
    static func fillBacklog(_ bed: DaemonTestBed) async throws -> Set<String> {
        let database = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath, maxRows: 1_000_000))
        let now = Date().timeIntervalSince1970
        var ids: Set<String> = []
        for start in stride(from: 1, through: rows, by: 10_000) {
            let envelopes = (start..<min(start + 10_000, rows + 1)).map { sequence in
                let id = "\(bed.gatewayID)-\(sequence)"
                ids.insert(id)
                return EventEnvelope(
                    id: id, gatewayID: bed.gatewayID, sequence: UInt64(sequence), captureTime: now, kind: .region,
                    topic: "\(bed.topicBase)/region/hall/b\(sequence % 5000)", qos: 1, retain: false,
                    payload: "{\"id\":\"\(id)\",\"seq\":\(sequence)}")
            }
            try await database.append(envelopes)
        }
        #expect(try await database.stats().rows == rows)
        return ids
    }

    @Test func replayOnA200000RowBacklogDeliversItAll() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig()
        let backlog = try await Self.fillBacklog(bed)
        let subscriber = try await bed.startSubscriber()
        let capture = try bed.writeCapture(
            "short.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970 - 60, duration: 10, interval: 1))
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 900)
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(2000))")
        #expect(logValue(run.stderr, message: "msg=stopped", key: "outbox_rows") == "0")
        let prefix = "\(bed.topicBase)/region/hall/"
        try await waitUntil("the whole backlog at the subscriber", timeout: 120) {
            subscriber.messages(under: prefix).count >= Self.rows
        }
        await subscriber.stop()
        let received = Set(subscriber.messages(under: prefix).compactMap { $0.string("id") })
        #expect(received.isSuperset(of: backlog), "\(backlog.subtracting(received).count) backlog events missing")
        let reopened = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath))
        #expect(try await reopened.stats().rows == 0)
    }

    @Test func replayThatCannotDeliverExits75AndKeepsTheBacklog() async throws {
        let bed = try DaemonTestBed()  // the broker is never started
        try bed.writeConfig()
        let database = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath))
        try await database.append([
            EventEnvelope(
                id: "\(bed.gatewayID)-1", gatewayID: bed.gatewayID, sequence: 1,
                captureTime: Date().timeIntervalSince1970, kind: .region,
                topic: "\(bed.topicBase)/region/hall/b1", qos: 1, retain: false,
                payload: "{}")
        ])
        let capture = try bed.writeCapture(
            "short.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970 - 60, duration: 5, interval: 1))
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 300)
        #expect(run.status == 75, "stderr: \(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("events still undelivered at exit stay in the outbox"))
        #expect(try await database.stats().rows >= 1)
    }
}
