import BeaconCore
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
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let daemon = try DaemonProcess(
            arguments: ["run", "--config", bed.configPath, "--hci-feed", "0"], standardInput: pair[1])
        close(pair[1])
        defer { daemon.signal(SIGKILL) }

        let observation = DaemonTestBed.iBeaconObservations(minor: 7, start: 0, duration: 1, interval: 1)[0]
        let event = try #require(
            SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent))
        let packet = [0x04] + event
        for _ in 0..<5 {
            #expect(
                packet.withUnsafeBytes { send(pair[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == packet.count)
        }
        try await waitUntil("the beacon's sighting", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/sighting/").contains {
                $0.string("beacon_id") == bed.beaconID(minor: 7)
            }
        }
        // The end of the feed is the end of the source: the daemon stops as for a lost adapter (69).
        close(pair[0])
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 69, "stderr: \(daemon.stderr)")
        #expect(logValue(daemon.stderr, message: "msg=stopped", key: "hci_events") == "5", "stderr: \(daemon.stderr)")
    }
}
