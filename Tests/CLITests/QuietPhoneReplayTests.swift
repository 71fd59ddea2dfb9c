import BeaconModel
import Foundation
import TestSupport
import Testing

/// Away that fits the device, end to end: the built binary replays a capture of a phone that goes quiet for
/// three minutes again and again, through a real broker. After it has shown the habit twice, its third silence
/// is published as `stale`, not `away`, and its region is held (issue 30).
@Suite struct QuietPhoneReplayTests {
    static let start = 1_700_000_000.0

    /// Heard at 1 Hz, RSSI -55 (well inside), for 60 s at a time with 180 s silences between.
    static func habituallyQuietPhone(minor: Int) -> [Observation] {
        stride(from: 0.0, to: 4 * 240, by: 240).flatMap { offset in
            DaemonTestBed.iBeaconObservations(minor: minor, start: start + offset, duration: 60, interval: 1, rssi: -55)
        }
    }

    @Test func theThirdSilenceOfAHabituallyQuietPhoneIsStaleAndKeepsItsRegion() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(DaemonTestBed.officeRegion)
        // Minor 2: a tag heard for the first minute only, so the capture also shows a plain `away`.
        let tag = DaemonTestBed.iBeaconObservations(minor: 2, start: Self.start, duration: 60, interval: 0.5)
        let capture = try bed.writeCapture("quiet.btsnoop", Self.habituallyQuietPhone(minor: 1) + tag)
        let subscriber = try await bed.startSubscriber()
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 120)
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(2_000))")
        try await waitUntil("the last presence event arrived", timeout: 30) {
            subscriber.messages(under: "\(bed.topicBase)/presence/").count >= 10
        }

        let phone = bed.beaconID(minor: 1)
        let presence = subscriber.messages(under: "\(bed.topicBase)/presence/\(phone)")
        let states = presence.compactMap { $0.string("state") }
        // Silences 1 and 2 teach (away); silence 3 is usual for it (stale); it comes back (seen). At the end of
        // the capture the replay runs its clock on in one step until every beacon is away (with the exit).
        #expect(states == ["seen", "away", "seen", "away", "seen", "stale", "seen", "away"], "\(states)")
        let regionEvents = subscriber.messages(under: "\(bed.topicBase)/region/office/\(phone)")
            .compactMap { $0.string("event") }
        #expect(
            regionEvents == ["enter", "exit", "enter", "exit", "enter", "exit"], "no exit in the held silence")

        let stale = try #require(presence.first { $0.string("state") == "stale" })
        guard case let .double(awayAfter)? = stale.json?["away_after_s"] else {
            Issue.record("stale event without away_after_s: \(stale.payload)")
            return
        }
        #expect(abs(awayAfter - 307.2) < 0.1, "1.5 times the habitual silence's bucket edge (204.8 s)")
        guard case let .double(interval)? = stale.json?["interval_s"] else {
            Issue.record("stale event without interval_s: \(stale.payload)")
            return
        }
        #expect(interval > 0.8 && interval < 1.2, "1 Hz: \(interval)")

        let tagStates = subscriber.messages(under: "\(bed.topicBase)/presence/\(bed.beaconID(minor: 2))")
            .compactMap { $0.string("state") }
        #expect(tagStates == ["seen", "away"], "a silence not usual for the tag: away at the gateway's timeout")
    }
}
