import BeaconModel
import Foundation
import TestSupport
import Testing

/// The built binary's live path without an adapter: `run --hci-feed 0` with one end of a socket pair as its
/// standard input (the same reading thread, mailbox and loop as a scan), a real mosquitto on a loopback port.
@Suite(.serialized) struct LiveFeedTests {
    @Test func runFedThroughASocketPairPublishesAndEndsWhenTheFeedEnds() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(
            """
            scanner:
              stall_timeout_s: 0

            """)
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let (daemon, feed) = try bed.startFedDaemon()
        defer { daemon.signal(SIGKILL) }
        try feed.sendIBeacon(minor: 7, copies: 5)
        try await waitUntil("the beacon's sighting", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/sighting/").contains {
                $0.string("beacon_id") == bed.beaconID(minor: 7)
            }
        }
        // The end of the feed is the end of the source: the daemon stops as for a lost adapter (69).
        feed.close()
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 69, "stderr: \(daemon.stderr)")
        #expect(logValue(daemon.stderr, message: "msg=stopped", key: "hci_events") == "5", "stderr: \(daemon.stderr)")
    }
}
