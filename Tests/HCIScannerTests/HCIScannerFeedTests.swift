import BeaconFormats
import BeaconRuntime
import HCIScanner
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The scanner's reading thread and hand-over on a socket pair standing in for a controller
/// (`HCIScanner(settings:feedDescriptor:)`, `run --hci-feed`).
@Suite struct HCIScannerFeedTests {
    static func send(_ descriptor: Int32, _ packet: [UInt8], flags: Int32 = 0) -> Int {
        packet.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | flags) }
    }

    @Test func fedPacketsArriveWithoutTheirH4ByteAndTheEndOfTheFeedFinishesTheStream() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let events: [[UInt8]] = (0..<5).map { [0x3E, 0x03, 0x02, 0x00, UInt8($0)] }
        // Queued before the scanner starts, so its first wake-up drains them together; an ACL data packet
        // (H4 type 0x02) in between is not an event and is skipped.
        for (index, event) in events.enumerated() {
            #expect(Self.send(pair[0], [0x04] + event) == event.count + 1)
            if index == 2 { #expect(Self.send(pair[0], [0x02, 0x01, 0x00, 0x00, 0x00]) == 5) }
        }
        let before = Double(time(nil))
        let scanner = HCIScanner(settings: ScannerSettings(), feedDescriptor: pair[1])
        let stream = try await scanner.events()
        close(pair[0])
        var received: [CapturedHCIEvent] = []
        for await event in stream { received.append(event) }
        #expect(received.map(\.bytes) == events)
        #expect(received.allSatisfy { $0.timestamp >= before - 1 })
        #expect(scanner.statistics.delivered == 5)
        #expect(scanner.statistics.dropped == 0)
    }

    /// More events than one `recvmmsg` takes (64) waiting at the first wake-up, with non-event packets among
    /// them: every event arrives once, in order, whole. (Sent without waiting: a full socket fails the test
    /// instead of blocking it.)
    @Test func aLongBacklogIsDrainedInChunksInOrder() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        var buffer = 1 << 20
        _ = setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<Int>.size))
        // Events of different lengths (the largest an event can be among them), numbered in two bytes.
        let events: [[UInt8]] = (0..<200).map { index in
            let parameters = index % 50 == 7 ? 255 : 4 + index % 30
            return [0x3E, UInt8(parameters), UInt8(index >> 8), UInt8(index & 0xFF)]
                + [UInt8](repeating: UInt8(index % 251), count: parameters - 2)
        }
        for (index, event) in events.enumerated() {
            #expect(Self.send(pair[0], [0x04] + event, flags: Int32(MSG_DONTWAIT)) == event.count + 1)
            if index % 64 == 63 {
                #expect(Self.send(pair[0], [0x02, 0x01, 0x00, 0x00, 0x00], flags: Int32(MSG_DONTWAIT)) == 5)
            }
        }
        let scanner = HCIScanner(settings: ScannerSettings(), feedDescriptor: pair[1])
        let stream = try await scanner.events(capacity: 1000)
        close(pair[0])
        var received: [[UInt8]] = []
        for await event in stream { received.append(event.bytes) }
        #expect(received.count == events.count)
        #expect(received == events)
        #expect(scanner.statistics.delivered == 200)
    }

    @Test func aConsumerFarBehindLosesTheOldestEventsCounted() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let scanner = HCIScanner(settings: ScannerSettings(), feedDescriptor: pair[1])
        // A mailbox of 4 events and a consumer that takes nothing until the feed ended.
        let stream = try await scanner.events(capacity: 4)
        for index in 0..<10 {
            #expect(Self.send(pair[0], [0x04, 0x3E, 0x03, 0x02, 0x00, UInt8(index)]) == 6)
        }
        close(pair[0])
        try await waitFor { scanner.statistics.delivered == 10 }
        var received: [UInt8] = []
        for await event in stream { received.append(event.bytes[4]) }
        #expect(received == [6, 7, 8, 9])
        #expect(scanner.statistics.dropped == 6)
    }

    /// `stop()` ends a reading thread that waits on a quiet feed (its wake-up pipe ends the `poll`): the source
    /// finishes although the feed stays open.
    @Test func stopEndsAScannerWaitingOnAQuietFeed() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        let scanner = HCIScanner(settings: ScannerSettings(), feedDescriptor: pair[1])
        let mailbox = EventMailbox<Never>(capacity: 16)
        try await scanner.start(into: mailbox)
        #expect(Self.send(pair[0], [0x04, 0x3E, 0x03, 0x02, 0x00, 0x01]) == 6)
        guard case let .events(batches) = await mailbox.next() else {
            Issue.record("no batch")
            return
        }
        #expect(batches.flatMap { $0 }.map(\.bytes) == [[0x3E, 0x03, 0x02, 0x00, 0x01]])
        scanner.stop()
        // The reading thread finishes the mailbox once it has left its wait (nothing else ends it: the feed stays open).
        guard case .finished = await mailbox.next() else {
            Issue.record("the mailbox did not finish after stop()")
            return
        }
        #expect(scanner.isStopped)
        #expect(scanner.statistics.delivered == 1)
    }

    /// An event carries the kernel's receive time, not the time the reading thread read it: the second event
    /// arrives while the thread pauses for its 2 s window after the first, and its timestamp is no later than
    /// the moment it was sent.
    @Test func eventsCarryTheirArrivalTimeNotTheReadTime() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        let scanner = HCIScanner(
            settings: ScannerSettings(), feedDescriptor: pair[1], batchWindow: BatchWindow(minimum: 2, maximum: 2))
        let mailbox = EventMailbox<Never>(capacity: 16)
        try await scanner.start(into: mailbox)
        defer { scanner.stop() }
        #expect(Self.send(pair[0], [0x04, 0x3E, 0x03, 0x02, 0x00, 0x01]) == 6)
        guard case let .events(first) = await mailbox.next() else {
            Issue.record("no first batch")
            return
        }
        #expect(first.flatMap { $0 }.count == 1)
        #expect(Self.send(pair[0], [0x04, 0x3E, 0x03, 0x02, 0x00, 0x02]) == 6)
        var sent = timespec()
        clock_gettime(CLOCK_REALTIME, &sent)
        let sentAt = Double(sent.tv_sec) + Double(sent.tv_nsec) / 1e9
        guard case let .events(second) = await mailbox.next() else {
            Issue.record("no second batch")
            return
        }
        var read = timespec()
        clock_gettime(CLOCK_REALTIME, &read)
        let events = second.flatMap { $0 }
        #expect(events.map(\.bytes) == [[0x3E, 0x03, 0x02, 0x00, 0x02]])
        let stamp = try #require(events.first?.timestamp)
        #expect(stamp <= sentAt, "timestamp \(stamp) is after the send at \(sentAt)")
        #expect(stamp >= sentAt - 60)
        // The thread read it after its pause, well after the send (a plausibility check of the setup).
        #expect(Double(read.tv_sec) + Double(read.tv_nsec) / 1e9 > stamp)
    }

    func waitFor(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within 60 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
