import BeaconTracking
import Foundation
import TestSupport

/// The test's end of `beaconbridge run --hci-feed 0`: a SOCK_SEQPACKET socket pair whose other end is the
/// daemon's standard input, so what is sent here is what the HCI reading thread receives (H4 packets).
final class HCIFeed: @unchecked Sendable {
    private let lock = NSLock()
    private var descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Sends the test iBeacon with `minor` as a legacy advertising report, `copies` times; throws on a short send.
    func sendIBeacon(minor: Int, copies: Int = 3) throws {
        let observation = DaemonTestBed.iBeaconObservations(minor: minor, start: 0, duration: 1, interval: 1)[0]
        guard let event = SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent)
        else { throw TestFailure("no advertising report for minor \(minor)") }
        let packet = [0x04] + event
        let socket = lock.withLock { descriptor }
        for _ in 0..<copies {
            let sent = packet.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == packet.count else { throw TestFailure("sent \(sent) of \(packet.count) bytes to the feed") }
        }
    }

    func sendIBeacons(minors: ClosedRange<Int>, copies: Int = 3) throws {
        for minor in minors { try sendIBeacon(minor: minor, copies: copies) }
    }

    /// Ends the feed (the daemon sees the end of its source). Idempotent.
    func close() {
        let socket = lock.withLock { () -> Int32 in
            defer { descriptor = -1 }
            return descriptor
        }
        if socket >= 0 { _ = Foundation.close(socket) }
    }

    deinit { close() }
}

extension DaemonTestBed {
    /// Starts `beaconbridge run --config <bed> --hci-feed 0` fed through an `HCIFeed`.
    func startFedDaemon() throws -> (daemon: DaemonProcess, feed: HCIFeed) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw TestFailure("socketpair failed: errno \(errno)")
        }
        let feed = HCIFeed(descriptor: pair[0])
        defer { Foundation.close(pair[1]) }
        let daemon = try DaemonProcess(
            arguments: ["run", "--config", configPath, "--hci-feed", "0"], standardInput: pair[1])
        return (daemon, feed)
    }
}
