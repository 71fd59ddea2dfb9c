import BeaconModel
import Foundation
import TestSupport
import Testing

/// Issue 17.6 with the built binary and a real broker: `seq` strictly increasing across every restart, through
/// a run that numbered its events without the database. Run 1 is a normal replay; in run 2 (a live gateway fed
/// through a socket pair) the outbox's small tmpfs fills right after the start, so the database takes no
/// writes: sequence numbers come from the wall clock (`cannot reserve sequence numbers in the database`) and the
/// events wait in memory; run 3, with space again, is a normal replay. Every seq of run 3 > every seq of run 2
/// > every seq of run 1. Prints `SKIP:` where a tmpfs cannot be mounted (not root with CAP_SYS_ADMIN).
@Suite(.serialized) struct SequenceRestartTests {
    @Test(.timeLimit(.minutes(5))) func seqIncreasesAcrossARunWithoutAWritableDatabase() async throws {
        let mountPoint = try TestDirectory.make(prefix: "bb-seq-tmpfs")
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        guard
            await ScratchFileSystem.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", mountPoint])
        else {
            print("SKIP: SequenceRestartTests needs to mount a tmpfs (root with CAP_SYS_ADMIN); not run here")
            return
        }
        do {
            try await runs(outboxDirectory: mountPoint)
        } catch {
            _ = await ScratchFileSystem.run("/bin/umount", ["-l", mountPoint])
            throw error
        }
        #expect(await ScratchFileSystem.run("/bin/umount", ["-l", mountPoint]))
    }

    func runs(outboxDirectory: String) async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(
            "scanner:\n  stall_timeout_s: 0", telemetry: "enabled: false", outbox: "\(outboxDirectory)/outbox.sqlite")
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        @Sendable func sequences(minor: Int) -> [UInt64] {
            subscriber.messages.filter { $0.string("beacon_id") == bed.beaconID(minor: minor) }.compactMap(\.sequence)
        }

        // Run 1: normal.
        let first = try bed.writeCapture(
            "r1.btsnoop", DaemonTestBed.iBeaconObservations(minor: 1, start: 1_700_000_000, duration: 5, interval: 1))
        let run1 = try await BuiltBinary.run(["replay", first, "--config", bed.configPath], timeout: 90)
        #expect(run1.status == 0, "\(run1.stderr)")
        try await waitUntil("run 1's events", timeout: 60) { !sequences(minor: 1).isEmpty }
        try await Task.sleep(for: .seconds(1))  // late arrivals of run 1 land in its slice
        let endOfRun1 = subscriber.messages.count

        // Run 2: the disk fills right after the start; numbers from the wall clock.
        let (daemon, feed) = try bed.startFedDaemon()
        defer {
            daemon.signal(SIGKILL)
            feed.close()
        }
        try await waitUntil("run 2 connected", timeout: 60) { daemon.stderr.contains("connected to the MQTT broker") }
        let ballast = outboxDirectory + "/ballast"
        let filled = try ScratchFileSystem.fill(ballast)
        print("disk full: ballast \(filled) bytes")
        let wallClockAtFill = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        try feed.sendIBeacons(minors: 2...4)
        try await waitUntil("run 2's events", timeout: 60) { (2...4).allSatisfy { !sequences(minor: $0).isEmpty } }
        #expect(
            daemon.stderr.contains("cannot reserve sequence numbers in the database"),
            "run 2 numbered from the wall clock: \(daemon.stderr)")
        daemon.signal(SIGTERM)
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 0, "\(daemon.stderr)")
        try FileManager.default.removeItem(atPath: ballast)
        try await Task.sleep(for: .seconds(1))
        let endOfRun2 = subscriber.messages.count

        // Run 3: normal again, space is back.
        let third = try bed.writeCapture(
            "r3.btsnoop", DaemonTestBed.iBeaconObservations(minor: 5, start: 1_700_000_100, duration: 5, interval: 1))
        let run3 = try await BuiltBinary.run(["replay", third, "--config", bed.configPath], timeout: 90)
        #expect(run3.status == 0, "\(run3.stderr)")
        try await waitUntil("run 3's events", timeout: 60) { !sequences(minor: 5).isEmpty }

        // Every event each run published (sightings, presence), by when it arrived.
        let messages = subscriber.messages
        let runs = [
            messages[..<endOfRun1].compactMap(\.sequence), messages[endOfRun1..<endOfRun2].compactMap(\.sequence),
            messages[endOfRun2...].compactMap(\.sequence),
        ]
        #expect((runs[1].min() ?? 0) >= wallClockAtFill, "run 2 numbered from the wall clock: \(runs)")
        for (earlier, later) in zip(runs, runs.dropFirst()) {
            let last = try #require(earlier.max())
            let next = try #require(later.min())
            #expect(next > last, "runs: \(runs)")
        }
    }
}
