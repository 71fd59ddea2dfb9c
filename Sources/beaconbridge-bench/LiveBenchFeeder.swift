import Foundation
import Synchronization

/// Stands in for a Bluetooth controller: writes H4 LE Advertising Report packets (one per datagram) into one
/// end of a `SOCK_SEQPACKET` socket pair at a fixed rate, from its own thread, in 1 ms steps (a USB
/// controller hands events over in about that rhythm). The other end is the gateway's `--hci-feed` socket.
final class LiveBenchFeeder: @unchecked Sendable {
    let rate: Int
    private let descriptor: Int32
    /// One H4 packet per beacon; the last byte (RSSI) gets deterministic noise per report.
    private let packets: [[UInt8]]
    private let stopFlag = Atomic<Bool>(false)
    private let sentCount = Atomic<Int>(0)
    private let skippedCount = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameter events: HCI events (event code first), one per beacon, sent round-robin.
    init(descriptor: Int32, rate: Int, events: [[UInt8]]) {
        self.descriptor = descriptor
        self.rate = rate
        self.packets = events.map { [0x04] + $0 }
    }

    /// Reports written so far.
    var sent: Int { sentCount.load(ordering: .relaxed) }
    /// Reports skipped because the gateway's socket stayed full for more than a second (it fell behind).
    var skipped: Int { skippedCount.load(ordering: .relaxed) }

    func start() {
        let thread = Thread { [self] in
            feed()
            finished.signal()
        }
        thread.start()
    }

    /// Stops feeding and waits for the thread (bounded: it checks the flag every millisecond).
    func stop() {
        guard !stopFlag.exchange(true, ordering: .relaxed) else { return }
        _ = finished.wait(timeout: .now() + 5)
    }

    private func feed() {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        var next = start
        var noise: UInt64 = 0x2545_F491_4F6C_DD1D
        var sent = 0
        var packet = packets[0]
        while !stopFlag.load(ordering: .relaxed) {
            next.tv_nsec += 1_000_000
            if next.tv_nsec >= 1_000_000_000 {
                next.tv_nsec -= 1_000_000_000
                next.tv_sec += 1
            }
            _ = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil)
            let elapsed = Double(next.tv_sec - start.tv_sec) + Double(next.tv_nsec - start.tv_nsec) / 1e9
            let due = Int(elapsed * Double(rate))
            if due - sent > rate {
                skippedCount.add(due - sent, ordering: .relaxed)
                sent = due
            }
            while sent < due, !stopFlag.load(ordering: .relaxed) {
                let index = sent % packets.count
                packet = packets[index]
                noise ^= noise << 13
                noise ^= noise >> 7
                noise ^= noise << 17
                let rssi = -55 - index % 40 + Int(noise % 9) - 4
                packet[packet.count - 1] = UInt8(bitPattern: Int8(rssi))
                let written = packet.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    stopFlag.store(true, ordering: .relaxed)
                    break
                }
                sent += 1
                sentCount.store(sent, ordering: .relaxed)
            }
        }
    }
}
