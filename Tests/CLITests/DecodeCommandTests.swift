import BeaconModel
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `beaconbridge` binary (`swift build --build-tests` builds it next to the tests) and checks
/// its JSON output and exit codes.
@Suite struct DecodeCommandTests {
    static let capture = BuiltBinary.androidCapture

    static func run(_ arguments: [String]) async throws -> BuiltBinary.Result { try await BuiltBinary.run(arguments) }

    @Test func decodesAdvertisingPayloads() async throws {
        let result = try await Self.run([
            "decode", "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
            "0303aafe1116aafe20000bb81780000004d200003039",
        ])
        #expect(result.status == 0)
        #expect(result.lines.count == 2)
        #expect(result.lines[0].hasPrefix(#"{"input":0,"ad":{"data":"0201061aff4c"#))
        #expect(
            result.lines[0].contains(#""id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2","format":"ibeacon""#))
        #expect(
            result.lines[1].contains(
                #""fields":{"adv_count":1234,"battery_mv":3000,"encrypted":false,"temperature_c":23.5,"tlm_version":0,"uptime_s":1234.5}"#
            ))
    }

    @Test func decodesWholeHCIEventsWithAndWithoutH4() async throws {
        let event = "3e2a02010301221100eeffc01e0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5c4"
        let result = try await Self.run(["decode", "--hci", "04" + event, event])
        #expect(result.status == 0)
        #expect(result.lines.count == 2)
        for line in result.lines {
            #expect(line.contains(#""address":"C0:FF:EE:00:11:22","address_type":"random","event_type":16"#))
            #expect(line.contains(#""rssi":-60"#))
            #expect(line.contains("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"))
        }
    }

    @Test func malformedInputIsAJSONErrorWithOffset() async throws {
        let result = try await Self.run(["decode", "--hci", "3e10020100", "3e0102"])
        #expect(result.status == 65)
        #expect(
            result.lines == [
                #"{"input":0,"error":"event declares 16 parameter bytes, 3 present","offset":1}"#,
                #"{"input":1,"error":"truncated number of reports: need 1 byte(s), 0 left","offset":3}"#,
            ])
        let badHex = try await Self.run(["decode", "02010x"])
        #expect(badHex.status == 65)
        #expect(badHex.lines == [#"{"input":0,"error":"not a hex digit","offset":5,"offset_unit":"character"}"#])
        let overrun = try await Self.run(["decode", "0201060aff4c00"])
        #expect(overrun.status == 65)
        #expect(
            overrun.lines.first?.hasSuffix(#""error":"AD structure length runs past the end of the data","offset":3}"#)
                == true)
    }

    @Test func runtimeLayoutAddsAFormat() async throws {
        let result = try await Self.run(["decode", "--layout", "acme=m:0-1=9900,i:2-3,p:-:-65", "05ff99000102"])
        #expect(result.status == 0)
        #expect(
            result.lines.first?.contains(
                #""beacons":[{"id":"acme:258","format":"acme","identifiers":["258"],"measured_power":-65}]"#) == true)
        let bad = try await Self.run(["decode", "--layout", "acme=m:0-1=9900,i:3-2", "05ff99000102"])
        #expect(bad.status == 65)
        #expect(bad.lines.first?.contains(#""term_number":2,"term":"i:3-2""#) == true)
    }

    @Test func bareLayoutGetsADefaultName() async throws {
        // A layout pasted as-is from the Android Beacon Library, no NAME= in front.
        let result = try await Self.run([
            "decode", "--layout", "m:0-1=9900,i:2-3,p:-:-65", "--layout", "x,m:0-1=9900",
            "05ff99000102",
        ])
        #expect(result.status == 0)
        #expect(
            result.lines.first?.contains(
                #""beacons":[{"id":"layout:258","format":"layout","identifiers":["258"],"measured_power":-65}]"#)
                == true)
        #expect(try await Self.run(["decode", "--layout", "", "05ff99000102"]).status == 64)
    }

    @Test func eventTypesArePrintedByName() async throws {
        let event = "3e2a02010301221100eeffc01e0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5c4"
        let result = try await Self.run(["decode", "--hci", event])
        #expect(result.lines.first?.contains(#""event_type":16,"event_type_name":"adv_nonconn_ind""#) == true)
    }

    @Test func usageErrors() async throws {
        #expect(try await Self.run(["decode"]).status == 64)
        #expect(try await Self.run(["decode", "--frobnicate"]).status == 64)
        #expect(try await Self.run(["decode", "--btsnoop"]).status == 64)
        #expect(try await Self.run(["decode", "--btsnoop", "/nonexistent/capture.log"]).status == 66)
    }

    @Test func decodesTheAndroidCapture() async throws {
        let result = try await Self.run(["decode", "--btsnoop", Self.capture])
        #expect(result.status == 0)
        #expect(result.lines.count == 413)
        let summary = try #require(result.lines.last)
        #expect(
            summary.hasPrefix(#"{"summary":{"records":2572,"hci_events":818,"advertising_events":412,"reports":412"#))
        let govee = result.lines.filter { $0.contains("ibeacon:494e5445-4c4c-495f-524f-434b535f4857:20594:62207") }
        #expect(!govee.isEmpty)
        #expect(govee.allSatisfy { $0.contains(#""scan_response":true"#) })
        #expect(result.lines.dropLast().allSatisfy { $0.hasPrefix(#"{"record":"#) })
    }

    @Test func truncatedCaptureKeepsEarlierReports() async throws {
        guard let bytes = readFile(Self.capture) else {
            Issue.record("capture missing")
            return
        }
        let path = "/tmp/beaconbridge-decode-test-\(getpid()).log"
        defer { unlink(path) }
        let records = try BTSnoopReader.readAll(bytes).records
        let cut = Array(bytes[0..<(records[300].fileOffset + 30)])
        guard let handle = fopen(path, "wb") else {
            Issue.record("cannot write \(path)")
            return
        }
        _ = cut.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, handle) }
        fclose(handle)
        let result = try await Self.run(["decode", "--btsnoop", path])
        #expect(result.status == 65)
        #expect(result.lines.count > 1)
        let summary = try #require(result.lines.last)
        #expect(summary.contains(#""error":"truncated record"#))
    }

    @Test func malformedEventInACaptureIsReportedWithItsFileOffset() async throws {
        let writer = BTSnoopWriter(datalink: .hciUART)
        let good: [UInt8] = [0x3E, 0x0C, 0x02, 0x01, 0x03, 0x00, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0, 0x00, 0xC4]
        let bad: [UInt8] = [0x3E, 0x03, 0x02, 0x01, 0x07]
        let file =
            writer.header() + writer.eventRecord(good, timestamp: 1_700_000_000)
            + writer.eventRecord(bad, timestamp: 1_700_000_001) + writer.eventRecord(good, timestamp: 1_700_000_002)
        let path = "/tmp/beaconbridge-decode-bad-\(getpid()).log"
        defer { unlink(path) }
        guard let handle = fopen(path, "wb") else {
            Issue.record("cannot write \(path)")
            return
        }
        _ = file.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, handle) }
        fclose(handle)
        let result = try await Self.run(["decode", "--btsnoop", path])
        #expect(result.status == 65)
        #expect(result.lines.count == 4)
        // Record 2 starts at 16 + 24 + 15; its event follows the 24-byte header and the H4 byte; the bad
        // event type is its 5th byte (offset 4).
        let offset = 16 + (24 + 15) + 24 + 1 + 4
        #expect(
            result.lines[1] == #"{"record":2,"error":"unknown legacy advertising event type 7","offset":\#(offset)}"#)
        #expect(result.lines[0].contains(#""time":1700000000"#))
        #expect(result.lines[3].contains(#""reports":2"#) && result.lines[3].contains(#""errors":1"#))
    }

    func readFile(_ path: String) -> [UInt8]? {
        guard let handle = fopen(path, "rb") else { return nil }
        defer { fclose(handle) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
            if count <= 0 { break }
            out += chunk[0..<count]
        }
        return out
    }
}
