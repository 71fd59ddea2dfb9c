import BeaconModel
import BeaconTracking
import Testing

@testable import HCIScanner

#if canImport(Glibc)
import Glibc
#endif

/// Issue 17, items 11 and 12: captures are read only from regular files (no hang on a FIFO), written only to
/// regular files, mode 0600, never through a planted symbolic link; a paced replay caps idle gaps.
@Suite struct CaptureFileSafetyTests {
    @Test func theRecorderRefusesAPlantedSymlinkAndLeavesItsTargetAlone() throws {
        let target = try TemporaryFile.write(Array("precious".utf8))
        defer { unlink(target) }
        let link = TemporaryFile.path()
        unlink(link)
        #expect(symlink(target, link) == 0)
        defer { unlink(link) }
        let failure = #expect(throws: CaptureFile.Failure.self) { try BTSnoopFileRecorder(path: link) }
        #expect(failure?.description.contains("symbolic link") == true)
        #expect(try CaptureFile.read(path: target) == Array("precious".utf8))
        #expect(CaptureFile.outputProblem(link)?.contains("symbolic link") == true)
    }

    @Test func recordingsAreOwnerOnlyWhateverTheUmask() throws {
        let path = TemporaryFile.path()
        defer { unlink(path) }
        #expect(chmod(path, 0o644) == 0)
        let recorder = try BTSnoopFileRecorder(path: path)
        recorder.close()
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(CaptureFile.outputProblem(path) == nil)
    }

    @Test func aFIFOIsRefusedForReadingAndWritingWithoutWaiting() throws {
        let path = TemporaryFile.path()
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let read = #expect(throws: BTSnoopFileReader.Failure.self) { try BTSnoopFileReader(path: path) }
        if case let .io(failure)? = read {
            #expect(failure.isMissingOrUnreadable)
            #expect(failure.description.contains("a FIFO or pipe, not a regular file"))
        } else {
            Issue.record("expected an I/O failure, got \(String(describing: read))")
        }
        #expect(throws: CaptureFile.Failure.self) { try BTSnoopFileRecorder(path: path) }
        #expect(CaptureFile.outputProblem(path)?.contains("not a regular file") == true)
    }

    /// Ten events, then an hour of silence, then ten more, at real-time speed with a 2 s cap: the event after
    /// the gap is due at most 2 s (plus the 9 s of the first events) after the start, not an hour later.
    @Test func aPacedReplayCapsTheWaitOfAnHourLongGap() throws {
        let writer = BTSnoopWriter(datalink: .hciUART)
        var bytes = writer.header()
        let times = (0..<10).map { 1_700_000_000 + Double($0) } + (0..<10).map { 1_700_003_609 + Double($0) }
        for (index, time) in times.enumerated() {
            let observation = Observation(
                timestamp: time, beaconID: "", format: "ibeacon",
                identifiers: ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", String(index)],
                address: BluetoothAddress(rawValue: 0xC0_0000_0000 | UInt64(index)),
                rssi: -60, measuredPower: -59)
            let event = SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent)!
            bytes += writer.eventRecord(event, timestamp: time)
        }
        let path = try TemporaryFile.write(bytes)
        defer { unlink(path) }

        let capped = ReplayCursor(reader: try BTSnoopFileReader(path: path), speed: 1, maxIdleGap: 2)
        var delays: [Duration] = []
        while let (_, delay) = try capped.next() { delays.append(delay) }
        #expect(delays.count == 20)
        // Nothing has been waited for, so each delay is the event's whole schedule: 9 s of one-second steps,
        // then the capped gap.
        #expect(delays[10] <= .seconds(11))
        #expect(delays[10] > .seconds(5))
        #expect(delays.allSatisfy { $0 <= .seconds(20) })

        let uncapped = ReplayCursor(reader: try BTSnoopFileReader(path: path), speed: 1, maxIdleGap: nil)
        var last: Duration = .zero
        while let (_, delay) = try uncapped.next() { last = delay }
        #expect(last > .seconds(3600))
    }
}
