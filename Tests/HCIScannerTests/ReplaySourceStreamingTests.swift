import BeaconFormats
import BeaconModel
import BeaconTracking
import Synchronization
import Testing

@testable import HCIScanner

#if canImport(Glibc)
import Glibc
#endif

/// ReplaySource reads captures incrementally: captures many times larger than its read buffer replay
/// completely, and damage far into a file is reported as `BTSnoopReader` reports it on the whole file.
@Suite struct ReplaySourceStreamingTests {
    /// A synthetic capture of `count` iBeacon reports from 50 beacons, 10 ms apart, with one oversized
    /// non-event record (an ACL data packet larger than the read buffer) in the middle.
    static func largeCapture(count: Int) -> [UInt8] {
        let writer = BTSnoopWriter(datalink: .hciUART)
        var bytes = writer.header()
        for index in 0..<count {
            let observation = Observation(
                timestamp: 1_700_000_000 + Double(index) * 0.01, beaconID: "", format: "ibeacon",
                identifiers: ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", String(index % 50)],
                address: BluetoothAddress(rawValue: 0xC0_0000_0000 | UInt64(index % 50)),
                rssi: -60 - index % 20, measuredPower: -59)
            let event = SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent)!
            bytes += writer.eventRecord(event, timestamp: observation.timestamp)
            if index == count / 2 {
                let acl: [UInt8] = [0x02] + [UInt8](repeating: 0xAB, count: BTSnoopFileReader.defaultBufferSize + 5_000)
                bytes += writer.record(
                    payload: acl, flags: 0x1, drops: 0,
                    timestampMicros: BTSnoopTime.btsnoopMicros(fromUnixSeconds: observation.timestamp))
            }
        }
        return bytes
    }

    /// What the whole-file reader finds: the LE Meta events and the damage, if any.
    static func expected(_ bytes: [UInt8]) throws -> (events: [CapturedHCIEvent], error: DecodeError?) {
        let capture = try BTSnoopReader.readAll(bytes)
        let events = capture.records.compactMap { record -> CapturedHCIEvent? in
            guard let event = record.hciEvent(datalink: capture.datalink), event.first == 0x3E else { return nil }
            return CapturedHCIEvent(timestamp: record.unixTime, bytes: Array(event))
        }
        return (events, capture.error)
    }

    @Test func aCaptureLargerThanTheReadBufferReplaysCompletely() async throws {
        let bytes = Self.largeCapture(count: 20_000)
        #expect(bytes.count > 10 * BTSnoopFileReader.defaultBufferSize)
        let path = try TemporaryFile.write(bytes)
        defer { unlink(path) }
        let expected = try Self.expected(bytes)
        #expect(expected.events.count == 20_000)

        let source = ReplaySource(path: path)
        var events: [CapturedHCIEvent] = []
        for await event in try await source.events() { events.append(event) }
        #expect(events.count == expected.events.count)
        #expect(events.map(\.timestamp) == expected.events.map(\.timestamp))
        #expect(events.map(\.bytes) == expected.events.map(\.bytes))
        #expect(source.statistics.delivered == 20_000)
        #expect(source.failure == nil)
    }

    @Test func damageBeyondTheFirstBufferIsReportedWithItsFileOffset() async throws {
        let whole = Self.largeCapture(count: 6_000)
        let cut = Array(whole.prefix(whole.count * 3 / 4 + 7))
        let path = try TemporaryFile.write(cut)
        defer { unlink(path) }
        let expected = try Self.expected(cut)
        let damage = try #require(expected.error)
        #expect(damage.offset > BTSnoopFileReader.defaultBufferSize)

        let source = ReplaySource(path: path)
        var events: [CapturedHCIEvent] = []
        for await event in try await source.events() { events.append(event) }
        #expect(events.map(\.bytes) == expected.events.map(\.bytes))
        let failure = try #require(source.failure as? ReplaySource.Failure)
        #expect(failure == ReplaySource.Failure(path: path, message: damage.description, kind: .damaged))
    }

    @Test(arguments: [282, 300, 1_000, 4_096])
    func everyBufferSizeReadsTheSameRecords(bufferSize: Int) throws {
        let bytes = Self.largeCapture(count: 500)
        let path = try TemporaryFile.write(bytes)
        defer { unlink(path) }
        let reader = try BTSnoopFileReader(path: path, bufferSize: bufferSize)
        var records: [BTSnoopRecord] = []
        while let record = try reader.next() { records.append(record) }
        // The oversized ACL record is skipped unread; every other record is as the whole-file reader sees it.
        let whole = try BTSnoopReader.readAll(bytes).records.filter { $0.payload.count <= bufferSize }
        #expect(records == whole)
        #expect(records.count == 500)
    }

    @Test func aCaptureThatGrowsWhileReadEndsWhereItWasWhenOpened() throws {
        let bytes = Self.largeCapture(count: 3_000)
        let path = try TemporaryFile.write(bytes)
        defer { unlink(path) }
        let reader = try BTSnoopFileReader(path: path)
        // A recorder appends half a capture's worth of records after the reader opened the file.
        let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        try #require(fd >= 0)
        try CaptureFile.write(
            Array(bytes.dropFirst(BTSnoopReader.headerLength).prefix(bytes.count / 2)), to: fd, path: path)
        close(fd)
        var records: [BTSnoopRecord] = []
        while let record = try reader.next() { records.append(record) }
        let whole = try BTSnoopReader.readAll(bytes).records.filter {
            $0.payload.count <= BTSnoopFileReader.defaultBufferSize
        }
        #expect(records == whole)
    }

    @Test func aShortFileIsNotABtsnoopFile() throws {
        let path = try TemporaryFile.write(Array("btsno".utf8))
        defer { unlink(path) }
        #expect(throws: BTSnoopFileReader.Failure.self) { _ = try BTSnoopFileReader(path: path) }
    }
}

/// Counts the batches a source hands over (and their events); `end` finishes with the source.
final class BatchCountingSink: HCIEventSink {
    private let batchSizes = Mutex<[Int]>([])
    private let ended: AsyncStream<Void>.Continuation
    let end: AsyncStream<Void>

    init() { (end, ended) = AsyncStream<Void>.makeStream() }

    func offer(_ batch: [CapturedHCIEvent]) -> HCIEventOffer {
        batchSizes.withLock { $0.append(batch.count) }
        return HCIEventOffer(accepted: true)
    }

    func deliver(_ batch: [CapturedHCIEvent]) async -> Bool { offer(batch).accepted }

    func deliverWaiting(_ batch: [CapturedHCIEvent]) -> Bool { offer(batch).accepted }

    func finish() { ended.finish() }

    var sizes: [Int] { batchSizes.withLock { $0 } }
}

@Suite struct ReplayPacingTests {
    /// A capture of `count` iBeacon reports `interval` seconds apart.
    static func capture(count: Int, interval: Double) throws -> String {
        let writer = BTSnoopWriter(datalink: .hciUART)
        var bytes = writer.header()
        for index in 0..<count {
            let observation = Observation(
                timestamp: 1_700_000_000 + Double(index) * interval, beaconID: "", format: "ibeacon",
                identifiers: ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", String(index % 10)],
                address: BluetoothAddress(rawValue: 0xC0_0000_0000 | UInt64(index % 10)),
                rssi: -60, measuredPower: -59)
            let event = SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent)!
            bytes += writer.eventRecord(event, timestamp: observation.timestamp)
        }
        return try TemporaryFile.write(bytes)
    }

    /// At a low rate the window grows as the live reader's does (`BatchWindow`): 40 reports 25 ms apart
    /// (40/s) with a window of 10...250 ms aiming at 8 events come in a handful of batches, not one per
    /// report (10 ms alone would give about 40). Every event arrives, in order.
    @Test func aPacedReplayGrowsItsWindowAtLowRates() async throws {
        let path = try Self.capture(count: 40, interval: 0.025)
        defer { unlink(path) }
        let sink = BatchCountingSink()
        let source = ReplaySource(
            path: path, speed: 1, batchWindow: BatchWindow(minimum: 0.01, maximum: 0.25, targetEvents: 8))
        try await source.start(into: sink)
        for await _ in sink.end {}
        let sizes = sink.sizes
        #expect(sizes.reduce(0, +) == 40)
        #expect(sizes.count <= 12, "batches: \(sizes)")
        #expect(source.statistics.delivered == 40)
    }

    /// stop() ends a long pause at once (the replay thread waits on its wake-up pipe), not after the pause (an hour).
    @Test func stopEndsALongPauseAtOnce() async throws {
        // The second report is an hour later (so it cannot come before the stop, however loaded the machine).
        let path = try Self.capture(count: 2, interval: 3600)
        defer { unlink(path) }
        let sink = BatchCountingSink()
        let source = ReplaySource(path: path, speed: 1, maxIdleGap: nil)
        try await source.start(into: sink)
        let deadline = ContinuousClock.now + .seconds(60)
        while sink.sizes.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let stopped = ContinuousClock.now
        source.stop()
        for await _ in sink.end {}
        // Far below the hour's pause, which is all this shows; generous for a loaded machine: CI's first run,
        // creating the cross build's roots beside the suite, delayed this task by 40 s (session 19's CI run).
        #expect(ContinuousClock.now - stopped < .seconds(600))
        #expect(sink.sizes == [1])
    }

    /// A paced replay sleeps at least one batch window between hand-overs and only while the next event is not
    /// due yet, so 0.5 s of events 1 ms apart arrive in at most 0.5 / window + 2 batches (+1 when a late
    /// machine lets more than `batchLimit` pile up), however slow the machine. Every event arrives.
    @Test(arguments: [0.05, 0.1]) func aPacedReplayHandsOverOneBatchPerWindow(window: Double) async throws {
        let writer = BTSnoopWriter(datalink: .hciUART)
        var bytes = writer.header()
        for index in 0..<500 {
            let observation = Observation(
                timestamp: 1_700_000_000 + Double(index) * 0.001, beaconID: "", format: "ibeacon",
                identifiers: ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", String(index % 10)],
                address: BluetoothAddress(rawValue: 0xC0_0000_0000 | UInt64(index % 10)),
                rssi: -60, measuredPower: -59)
            let event = SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent)!
            bytes += writer.eventRecord(event, timestamp: observation.timestamp)
        }
        let path = try TemporaryFile.write(bytes)
        defer { unlink(path) }
        let sink = BatchCountingSink()
        let source = ReplaySource(path: path, speed: 1, batchWindow: BatchWindow(minimum: window, maximum: window))
        try await source.start(into: sink)
        for await _ in sink.end {}
        let sizes = sink.sizes
        #expect(sizes.reduce(0, +) == 500)
        #expect(sizes.count <= Int(0.5 / window) + 3, "batches: \(sizes)")
        #expect(sizes.count >= 2, "a paced replay of 0.5 s is not one batch: \(sizes)")
    }
}
