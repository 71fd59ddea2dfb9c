import BeaconFormats
import BeaconModel
import Testing

@testable import HCIScanner

#if canImport(Glibc)
import Glibc
#endif

@Suite struct BTSnoopFileRecorderTests {
    /// Records the fixture's events (as the scanner would: received, H4 byte first) and a command, then reads
    /// the file back with the btsnoop reader and the replay source.
    @Test func recordingRoundTripsThroughReplay() async throws {
        let original = try ReplaySourceTests.leMetaRecords()
        let path = TemporaryFile.path()
        defer { unlink(path) }
        let recorder = try BTSnoopFileRecorder(path: path)
        let command = HCICommand.leSetScanEnable(true)
        recorder.record(packet: command.packet, received: false, timestamp: original[0].unixTime)
        for record in original { recorder.record(packet: record.payload, received: true, timestamp: record.unixTime) }
        recorder.close()
        #expect(recorder.records == UInt64(original.count + 1))
        #expect(recorder.failure == nil)

        let capture = try BTSnoopReader.readAll(CaptureFile.read(path: path))
        #expect(capture.datalink == .hciUART)
        #expect(capture.error == nil)
        #expect(capture.records.first?.payload == command.packet)
        #expect(capture.records.first?.flags == 0x2)
        #expect(capture.records.dropFirst().allSatisfy { $0.flags == 0x3 })

        var replayed: [CapturedHCIEvent] = []
        for await event in try await ReplaySource(path: path).events() { replayed.append(event) }
        #expect(replayed.map(\.bytes) == original.map { Array($0.payload.dropFirst()) })
        #expect(replayed.map(\.timestamp) == original.map(\.unixTime))
    }

    @Test func unwritablePathFailsAtOpen() {
        #expect(throws: CaptureFile.Failure.self) { try BTSnoopFileRecorder(path: "/nonexistent/dir/x.btsnoop") }
    }
}
