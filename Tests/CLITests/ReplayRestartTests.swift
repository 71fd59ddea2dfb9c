import BeaconModel
import Foundation
import TestSupport
import Testing

/// Restarts tested offline (issue 9): the built binary replays a capture with `--state-db`, is stopped while
/// beacons are inside, and a second run over the continuation of the story restores the region state from
/// the same SQLite file. A real mosquitto on a free loopback port; the subscriber stays connected across both
/// runs and a fresh one reads what the broker retained.
@Suite(.serialized) struct ReplayRestartTests {
    static let regionConfig = """
        regions:
          - name: desk
            match:
              format: ibeacon
              uuid: \(DaemonTestBed.uuid)
            enter:
              rssi_above: -70
            exit_period_s: 5
            dropout_grace_s: 10
        """

    @Test func restartOverAReplayedStreamKeepsRegionState() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(Self.regionConfig)
        let stateDB = bed.directory + "/state.sqlite"
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let t0 = 1_700_000_000.0
        let regionPrefix = "\(bed.topicBase)/region/desk/"
        let ids = [1: bed.beaconID(minor: 1), 2: bed.beaconID(minor: 2)]
        @Sendable func regionMessages(_ minor: Int) -> [TestSubscriber.Message] {
            subscriber.messages(under: regionPrefix).filter { $0.string("beacon_id") == ids[minor] }
        }

        // Run 1: beacons 1 and 2 strong (10 dB above the enter level) for 60 s, replayed in real time; stopped
        // (SIGTERM) once both have entered, so the saved state is `inside` for both.
        let first = try bed.writeCapture(
            "first.btsnoop",
            DaemonTestBed.iBeaconObservations(minor: 1, start: t0, duration: 60, interval: 0.2)
                + DaemonTestBed.iBeaconObservations(minor: 2, start: t0, duration: 60, interval: 0.2))
        let run1 = try DaemonProcess(arguments: [
            "replay", first, "--speed", "1", "--config", bed.configPath,
            "--state-db", stateDB,
        ])
        try await waitUntil("both beacons entered", timeout: 60) {
            [1, 2].allSatisfy { minor in regionMessages(minor).contains { $0.string("event") == "enter" } }
        }
        run1.signal(SIGTERM)
        #expect(await run1.waitForExit(timeout: 30) == 0, "stderr: \(run1.stderr)")
        let afterFirst = subscriber.messages(under: regionPrefix).count

        // Run 2, about 95 s of capture time after the stop (inside the 900 s restore age): beacon 1 is still there; beacon 2 left
        // while the gateway was down and is now heard only weakly (15 dB below the exit level).
        let second = try bed.writeCapture(
            "second.btsnoop",
            DaemonTestBed.iBeaconObservations(minor: 1, start: t0 + 100, duration: 60, interval: 0.2)
                + DaemonTestBed.iBeaconObservations(
                    minor: 2, start: t0 + 100, duration: 60, interval: 0.2,
                    rssi: -90))
        let run2 = try DaemonProcess(arguments: [
            "replay", second, "--speed", "1", "--config", bed.configPath,
            "--state-db", stateDB,
        ])
        try await waitUntil("beacon 2's exit", timeout: 60) {
            regionMessages(2).contains { $0.string("event") == "exit" }
        }
        #expect(run2.stderr.contains("region state restored"), "stderr: \(run2.stderr)")

        // What a consumer connecting now is given: beacon 1 still inside, beacon 2 outside.
        let late = try TestSubscriber(port: bed.broker.port, patterns: [regionPrefix + "#"])
        try await late.start()
        defer { Task { await late.stop() } }
        try await waitUntil("the retained region states", timeout: 60) { late.messages.count >= 2 }
        let retained = Dictionary(
            late.messages.map { ($0.string("beacon_id") ?? "-", $0.string("state") ?? "-") },
            uniquingKeysWith: { $1 })
        #expect(retained[bed.beaconID(minor: 1)] == "inside")
        #expect(retained[bed.beaconID(minor: 2)] == "outside")

        run2.signal(SIGTERM)
        #expect(await run2.waitForExit(timeout: 30) == 0, "stderr: \(run2.stderr)")

        // No duplicate enter after the restart, an exit for the beacon that left during the downtime, and no
        // `unknown` published over a retained state in the second run.
        #expect(regionMessages(1).filter { $0.string("event") == "enter" }.count == 1)
        #expect(regionMessages(1).filter { $0.string("event") == "exit" }.isEmpty)
        #expect(regionMessages(2).filter { $0.string("event") == "enter" }.count == 1)
        #expect(regionMessages(2).filter { $0.string("event") == "exit" }.count == 1)
        let secondRun = subscriber.messages(under: regionPrefix).dropFirst(afterFirst)
        #expect(!secondRun.contains { $0.string("state") == "unknown" }, "\(secondRun.map(\.payload))")
    }

    @Test func replayWithoutStateDatabaseStartsFresh() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(Self.regionConfig)
        let capture = try bed.writeCapture(
            "one.btsnoop",
            DaemonTestBed.iBeaconObservations(minor: 1, start: 1_700_000_000, duration: 20, interval: 0.2))
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(!run.stderr.contains("region state restored"))
        // Bad option use is a usage error.
        let usage = try await BuiltBinary.run(
            ["replay", capture, "--config", bed.configPath, "--state-db"], timeout: 30)
        #expect(usage.status == 64)
    }
}
