import BeaconDelivery
import Foundation
import SQLiteStore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 32: how a replay ends its delivery. Events the client library refuses (dead letters) settle the replay
/// like broker refusals do; a stop signal during the final wait for delivery ends it at once with the rest kept
/// in the outbox; a broker that comes up late does not expire the start of the capture.
@Suite(.serialized) struct ReplayDeliveryEndTests {
    /// Over MQTT 5 the broker announces its `max_packet_size` in CONNACK and libmosquitto refuses larger events
    /// itself (`client refused: ...`, never handed over). Every event here is larger than 200 bytes, so every
    /// one is a dead letter and nothing is left to deliver: exit 0 (it waited 10 s and exited 75 with an empty
    /// outbox, since the settled count left client refusals out).
    @Test func aReplayWhoseOnlyUndeliveredEventsAreDeadLettersExits0() async throws {
        let bed = try DaemonTestBed(brokerConfig: "max_packet_size 200")
        try await bed.broker.start()
        try bed.writeConfig(mqtt: ["protocol: 5"])
        let capture = try bed.writeCapture(
            "short.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970 - 60, duration: 20, interval: 1))
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 300)
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(3000))")
        #expect(!run.stderr.contains("events still undelivered at exit stay in the outbox"))
        let deadLettered = Int(logValue(run.stderr, message: "msg=stopped", key: "dead_lettered") ?? "") ?? -1
        #expect(deadLettered > 0, "stderr: \(run.stderr.suffix(3000))")
        #expect(logValue(run.stderr, message: "msg=stopped", key: "outbox_rows") == "0")
        let database = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath))
        #expect(try await database.stats().rows == 0)
        let letters = try await database.deadLetters(limit: 10_000)
        #expect(letters.count == deadLettered)
        #expect(letters.allSatisfy { $0.reason.hasPrefix("client refused:") }, "\(letters.map(\.reason))")
    }

    /// SIGTERM while the replay waits for delivery at the end of its capture (here: no broker, so the wait
    /// makes no progress): the wait ends at once, `stopping` is logged, the events stay in the outbox, exit 75.
    /// Before the fix the signal was ignored: the wait ran on (up to an hour while delivery progressed), with
    /// no `stopping` line. The bound is the unit's stop timeout (`TimeoutStopSec=15s`), after which systemd
    /// would kill the process; the stop itself takes well under a second.
    @Test func sigtermDuringTheFinalWaitForDeliveryStopsAndKeepsTheOutbox() async throws {
        let bed = try DaemonTestBed()  // the broker is never started
        try bed.writeConfig()
        let capture = try bed.writeCapture(
            "short.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970 - 60, duration: 10, interval: 1))
        let process = try DaemonProcess(arguments: ["replay", capture, "--config", bed.configPath])
        try await waitUntil("the capture replayed (the final wait for delivery begins)", timeout: 120) {
            process.stderr.contains("capture replayed")
        }
        process.signal(SIGTERM)
        let status = await process.waitForExit(timeout: 15)
        let stderr = process.stderr
        #expect(status == 75, "stderr: \(stderr.suffix(3000))")
        #expect(logValue(stderr, message: "msg=stopping", key: "signal") == "SIGTERM", "stderr: \(stderr.suffix(3000))")
        #expect(stderr.contains("events still undelivered at exit stay in the outbox"))
        let rows = try await GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath)).stats().rows
        #expect(rows > 0)
        #expect(logValue(stderr, message: "msg=stopped", key: "outbox_rows") == "\(rows)")
        #expect(logValue(stderr, message: "msg=stopped", key: "dead_lettered") == "0")
    }

    /// `replay --speed 0` against a broker that is not up yet: the first connection attempt fails (the test
    /// waits for that), then the broker starts. A five-minute capture is read in milliseconds, so a source that
    /// ran ahead of the first connection put it all in the outbox with the capture clock at its end, and the
    /// drain expired every sighting more than `sighting_max_age_s` (60 s) older than that (`dropped=` about 48
    /// of 60). The replay now takes its capture in once connected: nothing expires, everything is delivered.
    @Test func aBrokerThatStartsLateExpiresNothingOfTheCapture() async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        let capture = try bed.writeCapture(
            "five-minutes.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970 - 600, duration: 300, interval: 1))
        let process = try DaemonProcess(arguments: ["replay", capture, "--config", bed.configPath, "--speed", "0"])
        try await waitUntil("a failed first connection attempt", timeout: 120) {
            process.stderr.contains("cannot connect to the MQTT broker")
        }
        try await bed.broker.start()
        let status = await process.waitForExit(timeout: 300)
        let stderr = process.stderr
        #expect(status == 0, "stderr: \(stderr.suffix(3000))")
        #expect(logValue(stderr, message: "msg=stopped", key: "dropped") == "0", "stderr: \(stderr.suffix(3000))")
        let events = Int(logValue(stderr, message: "msg=stopped", key: "events") ?? "") ?? -1
        #expect(events >= 60, "sightings every 5 s for 300 s, and the presence events")
        #expect(logValue(stderr, message: "msg=stopped", key: "outbox_rows") == "0")
    }
}
