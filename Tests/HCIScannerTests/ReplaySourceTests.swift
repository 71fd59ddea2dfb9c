import BeaconFormats
import BeaconModel
import Testing

@testable import HCIScanner

#if canImport(Glibc)
import Glibc
#endif

/// Replay over the real Android capture described in Tests/Fixtures/README.md.
@Suite struct ReplaySourceTests {
    static let fixture: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/Fixtures/android-horizon74-btsnoop.log"
    }()

    /// The LE Meta events of the capture, read independently of ReplaySource.
    static func leMetaRecords() throws -> [BTSnoopRecord] {
        let capture = try BTSnoopReader.readAll(CaptureFile.read(path: fixture))
        return capture.records.filter { $0.payload.count > 1 && $0.payload[0] == 0x04 && $0.payload[1] == 0x3E }
    }

    @Test func replaysEveryLEMetaEventWithCaptureTimestamps() async throws {
        let expected = try Self.leMetaRecords()
        let source = ReplaySource(path: Self.fixture)
        var events: [CapturedHCIEvent] = []
        for await event in try await source.events() { events.append(event) }
        #expect(events.count == expected.count)
        #expect(events.map(\.timestamp) == expected.map(\.unixTime))
        #expect(events.map(\.bytes) == expected.map { Array($0.payload.dropFirst()) })
        // The README's count of LE Advertising Report events in this capture.
        #expect(events.filter(\.isAdvertisingReport).count == 412)
        #expect(source.statistics.delivered == UInt64(events.count))
        #expect(source.failure == nil)
    }

    @Test func stopEndsTheStream() async throws {
        let source = ReplaySource(path: Self.fixture, speed: 1)
        var count = 0
        for await _ in try await source.events() {
            count += 1
            if count == 3 { source.stop() }
        }
        #expect(count == 3)
    }

    @Test func pacedReplayKeepsOrderAndTimestamps() async throws {
        // Speed 1000: the first events of the capture span well under a second of capture time.
        let source = ReplaySource(path: Self.fixture, speed: 1000)
        var timestamps: [Double] = []
        for await event in try await source.events() {
            timestamps.append(event.timestamp)
            if timestamps.count == 20 { source.stop() }
        }
        let expected = try Self.leMetaRecords().prefix(20).map(\.unixTime)
        #expect(timestamps == Array(expected))
    }

    @Test func missingFileNamesTheFile() async {
        let source = ReplaySource(path: "/nonexistent/capture.btsnoop")
        await #expect(throws: ReplaySource.Failure.self) { _ = try await source.events() }
        do { _ = try await source.events() } catch {
            #expect("\(error)".contains("/nonexistent/capture.btsnoop"))
            #expect("\(error)".contains("open"))
        }
    }

    @Test func notABtsnoopFile() async throws {
        let path = try TemporaryFile.write([UInt8]("hello, not a capture".utf8))
        defer { unlink(path) }
        do {
            _ = try await ReplaySource(path: path).events()
            Issue.record("a text file must be rejected")
        } catch {
            #expect("\(error)".contains("not a btsnoop file"))
        }
    }

    @Test func truncatedCaptureDeliversWhatPrecedesTheDamageAndReportsIt() async throws {
        let bytes = try CaptureFile.read(path: Self.fixture)
        // Cut inside the middle LE Meta record.
        let records = try Self.leMetaRecords()
        let middle = records[records.count / 2]
        let path = try TemporaryFile.write(Array(bytes.prefix(middle.fileOffset + 10)))
        defer { unlink(path) }
        let source = ReplaySource(path: path)
        var count = 0
        for await _ in try await source.events() { count += 1 }
        #expect(count == records.count / 2)
        #expect(source.failure != nil)
    }
}

/// A file in /tmp, removed by the test.
enum TemporaryFile {
    static func path() -> String {
        var template = Array("/tmp/beaconbridge-test-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd >= 0 { close(fd) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func write(_ bytes: [UInt8]) throws -> String {
        let path = path()
        let fd = try CaptureFile.create(path: path)
        defer { close(fd) }
        try CaptureFile.write(bytes, to: fd, path: path)
        return path
    }
}
