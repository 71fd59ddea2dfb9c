import BeaconDelivery
import BeaconModel
import Foundation
import SQLiteStore
import TestSupport
import Testing

/// The built binary's `run`/`replay` against a real mosquitto on a loopback port, real SQLite files and real
/// captured (or synthetic) radio bytes.
@Suite(.serialized) struct DaemonTests {
    @Test func replayOfTheAndroidCapturePublishesTheGoveeIBeacon() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig()
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }

        let run = try await BuiltBinary.run(
            ["replay", BuiltBinary.androidCapture, "--config", bed.configPath], timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("hci_events=416"))
        #expect(run.stderr.contains("reports=412"))

        // The capture holds two Govee H5072 thermometers that send an iBeacon in their scan response, and four
        // Govee H5072/H5075 whose advertising PDUs carry their readings (manufacturer data 0xEC88).
        let govees = Set([20594, 20597].map { "ibeacon:494e5445-4c4c-495f-524f-434b535f4857:\($0):62207" })
        let thermometers = Set(
            ["A4:C1:38:70:53:99", "A4:C1:38:83:EF:4C", "A4:C1:38:8B:73:F4", "A4:C1:38:BF:6F:AB"].map { "govee:" + $0 })
        try await waitUntil("every Govee beacon's away event", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/presence/").filter { $0.string("state") == "away" }.count == 6
        }
        let presence = subscriber.messages(under: "\(bed.topicBase)/presence/")
        for govee in govees.union(thermometers) {
            #expect(presence.filter { $0.string("beacon_id") == govee }.map { $0.string("state") } == ["seen", "away"])
        }
        #expect(
            presence.allSatisfy {
                ["ibeacon", "govee"].contains($0.string("format"))
                    && $0.topic.hasSuffix(TopicLevel.safe($0.string("beacon_id") ?? "-"))
            })
        let sightings = subscriber.messages(under: "\(bed.topicBase)/sighting/")
        #expect(Set(sightings.compactMap { $0.string("beacon_id") }) == govees.union(thermometers))
        // Names come from the advertising PDU; a scan response heard before any of them has none yet.
        #expect(sightings.contains { $0.string("name")?.hasPrefix("GVH5072_") == true })
        // The thermometers' readings travel in the sightings' fields.
        #expect(
            sightings.contains {
                $0.string("beacon_id") == "govee:A4:C1:38:BF:6F:AB" && $0.payload.contains(#""temperature_c":18.4"#)
            })

        // Every event the run submitted arrived, with consecutive sequence numbers (a fresh database starts
        // its counter at the wall clock in microseconds, docs/outbox.md) and no gap.
        let submitted = try #require(logValue(run.stderr, message: "msg=stopped", key: "events").flatMap { UInt64($0) })
        let sequences = subscriber.messages.compactMap(\.sequence).sorted()
        let first = try #require(sequences.first)
        #expect(sequences == Array(first..<first + submitted), "stderr: \(run.stderr)")
        // Availability: online on connect, offline retained when it stopped.
        let availability = subscriber.messages(under: "\(bed.topicBase)/availability").map(\.payload)
        #expect(availability.first == "online")
        #expect(availability.last == "offline")
    }

    @Test func replayAsFastAsPossibleHandlesEveryEvent() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig()
        // 40,000 events: more than the loop's input buffer, so the source must wait for the pipeline.
        let observations = (1...8).flatMap {
            DaemonTestBed.iBeaconObservations(minor: $0, start: 1_700_000_000, duration: 500, interval: 0.1)
        }
        let capture = try bed.writeCapture("many.btsnoop", observations)
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 120)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(logValue(run.stderr, message: "capture replayed", key: "hci_events") == "\(observations.count)")
        // Every report decoded to a beacon observation, of 8 distinct beacons (minors 1...8).
        #expect(
            logValue(run.stderr, message: "capture replayed", key: "beacon_observations") == "\(observations.count)")
        #expect(logValue(run.stderr, message: "capture replayed", key: "beacons") == "8")
    }

    @Test func sigtermDuringABacklogLosesNothing() async throws {
        try await backlogSurvives(signal: SIGTERM)
    }

    @Test func killMinus9WhileOfflineKeepsTheBacklog() async throws {
        try await backlogSurvives(signal: SIGKILL)
    }

    /// The broker is down; the gateway buffers to the outbox; it is stopped by `signal`; the broker comes up
    /// and the next run delivers what the first run had stored.
    func backlogSurvives(signal: Int32) async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        let now = Date().timeIntervalSince1970
        // Ten minutes of capture at speed 1, so the signal always comes while it is replaying: with 30 s, a
        // machine loaded by a cross build's roots beside the suite let the replay end first (exit 75, backlog
        // kept) before the test's signal came.
        let first = try bed.writeCapture(
            "first.btsnoop",
            DaemonTestBed.iBeaconObservations(minor: 1, start: now, duration: 600, interval: 0.2)
                + DaemonTestBed.iBeaconObservations(minor: 2, start: now, duration: 600, interval: 0.5))
        let daemon = try DaemonProcess(arguments: ["replay", first, "--speed", "1", "--config", bed.configPath])
        // Let the gateway create and migrate its database before this test opens a second connection.
        try await waitUntil("the gateway started", timeout: 60) { daemon.stderr.contains("replaying capture") }
        #expect(!daemon.stderr.contains("cannot open the outbox database"), "stderr: \(daemon.stderr)")
        try await DaemonTests.waitForBacklog(atLeast: 4, path: bed.outboxPath, timeout: 60)
        try await Task.sleep(for: .seconds(2))
        let stoppedAt = Date()
        daemon.signal(signal)
        let status = try #require(
            await daemon.waitForExit(timeout: 30), "the gateway did not exit; stderr: \(daemon.stderr)")
        if signal == SIGTERM {
            #expect(status == 0, "stderr: \(daemon.stderr)")
            // Within the unit's TimeoutStopSec (15 s), with room for a loaded machine; the daemon itself gives
            // acknowledgements 2 s (docs/outbox.md).
            #expect(Date().timeIntervalSince(stoppedAt) < 15)
        } else {
            #expect(status == 128 + SIGKILL)
        }

        let database = try GatewayDatabase(settings: OutboxSettings(path: bed.outboxPath))
        let backlog = try await database.peek(after: nil, limit: 100_000)
        #expect(backlog.count >= 4)
        #expect(backlog.contains { $0.kind == .presence })
        let stored = Set(backlog.map(\.sequence))

        try await bed.broker.start()
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let second = try bed.writeCapture(
            "second.btsnoop", DaemonTestBed.iBeaconObservations(minor: 3, start: now + 40, duration: 1, interval: 0.5))
        let run = try await BuiltBinary.run(["replay", second, "--config", bed.configPath], timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        do {
            try await waitUntil("the whole backlog", timeout: 60) {
                stored.isSubset(of: Set(subscriber.messages.compactMap(\.sequence)))
            }
        } catch {
            let missing = stored.subtracting(subscriber.messages.compactMap(\.sequence))
            let kinds = backlog.filter { missing.contains($0.sequence) }.map { "\($0.sequence):\($0.kind)" }
            Issue.record("undelivered backlog rows \(kinds.sorted()); second run stderr:\n\(run.stderr)")
            throw error
        }
        // Sequence numbers keep increasing across the restart.
        let secondRun = subscriber.messages.filter { $0.string("beacon_id") == bed.beaconID(minor: 3) }.compactMap(
            \.sequence)
        #expect(!secondRun.isEmpty)
        #expect(secondRun.allSatisfy { $0 > stored.max() ?? 0 })
        // Presence events of the first run arrive in capture order.
        let presence = subscriber.messages(under: "\(bed.topicBase)/presence/").compactMap(\.sequence).filter {
            stored.contains($0)
        }
        #expect(presence == presence.sorted())
    }

    /// Polls the gateway's outbox (a second connection to the same SQLite file) until it holds `count` rows.
    static func waitForBacklog(atLeast count: Int, path: String, timeout: Double) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last = "nothing read"
        while Date() < deadline {
            do {
                let rows = try await GatewayDatabase(settings: OutboxSettings(path: path)).stats().rows
                if rows >= count { return }
                last = "\(rows) rows"
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw TestFailure("the outbox at \(path) did not reach \(count) rows in \(timeout) s (last: \(last))")
    }

    @Test func sighupReloadsRegionsAndKeepsTrackerState() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig()
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let now = Date().timeIntervalSince1970
        let capture = try bed.writeCapture(
            "near.btsnoop",
            DaemonTestBed.iBeaconObservations(minor: 7, start: now, duration: 40, interval: 0.2, rssi: -55))
        let daemon = try DaemonProcess(arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath])
        try await waitUntil("the beacon seen", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/presence/").contains { $0.string("state") == "seen" }
        }

        // A broken file is refused as a whole; the gateway keeps running on the old configuration.
        try "regions:\n  - name: desk\n    matchh: {}\n".write(
            toFile: bed.configPath, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try await waitUntil("the refused reload logged", timeout: 60) { daemon.stderr.contains("reload refused") }
        #expect(daemon.isRunning)
        #expect(daemon.stderr.contains("matchh"))

        try bed.writeConfig(
            """
            regions:
              - name: desk
                match:
                  format: ibeacon
                  uuid: \(DaemonTestBed.uuid)
                enter:
                  rssi_above: -70
            """)
        daemon.signal(SIGHUP)
        try await waitUntil("an enter event for the new region", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/region/desk/").contains { $0.string("event") == "enter" }
        }
        #expect(daemon.stderr.contains("configuration reloaded"))
        // The tracker kept its state: no second `seen` for the beacon after the reload.
        #expect(
            subscriber.messages(under: "\(bed.topicBase)/presence/").filter { $0.string("state") == "seen" }.count == 1)
        daemon.signal(SIGTERM)
        #expect(await daemon.waitForExit(timeout: 30) == 0)
    }
}
