import Testing

@testable import BeaconModel

@Suite struct BTSnoopTests {
    @Test func readsTheAndroidCapture() throws {
        let bytes = DecodingFixtures.capture
        #expect(bytes.count == 123_160)
        let capture = try BTSnoopReader.readAll(bytes)
        #expect(capture.datalink == .hciUART)
        #expect(capture.error == nil)
        #expect(capture.records.count == 2572)
        let events = capture.records.compactMap { $0.hciEvent(datalink: capture.datalink) }
        let advertising = events.filter { $0.count > 2 && $0[$0.startIndex] == 0x3E && $0[$0.startIndex + 2] == 0x02 }
        #expect(advertising.count == 412)
        // Android writes real wall-clock timestamps: the capture is from 2021.
        let first = try #require(capture.records.first)
        #expect(first.unixTime > 1_600_000_000 && first.unixTime < 1_700_000_000)
    }

    @Test func truncatedCaptureKeepsEarlierRecords() throws {
        let bytes = DecodingFixtures.capture
        let full = try BTSnoopReader.readAll(bytes)
        let third = full.records[3]
        let cut = Array(bytes[0..<(third.fileOffset + 30)])
        let partial = try BTSnoopReader.readAll(cut)
        #expect(partial.records == Array(full.records[0..<3]))
        #expect(partial.error?.offset == third.fileOffset)
    }

    @Test func rejectsBadHeaders() {
        #expect(throws: DecodeError.self) { try BTSnoopReader(bytes: Array("btsnoop".utf8)) }
        var wrongMagic = BTSnoopWriter().header()
        wrongMagic[0] = 0x42
        #expect((try? BTSnoopReader(bytes: wrongMagic)) == nil)
        var wrongVersion = BTSnoopWriter().header()
        wrongVersion[11] = 2
        #expect(throws: DecodeError(offset: 8, reason: "unsupported btsnoop version 2")) {
            try BTSnoopReader(bytes: wrongVersion)
        }
        var wrongLink = BTSnoopWriter().header()
        wrongLink[15] = 0xE8  // datalink 1000
        #expect(throws: DecodeError.self) { try BTSnoopReader(bytes: wrongLink) }
    }

    @Test(arguments: [BTSnoopDatalink.hciUART, .hciUnencapsulated])
    func writerOutputReadsBack(datalink: BTSnoopDatalink) throws {
        let writer = BTSnoopWriter(datalink: datalink)
        let event: [UInt8] = [0x3E, 0x03, 0x02, 0x00, 0x01]
        let time = 1_700_000_123.456789
        let file =
            writer.header() + writer.eventRecord(event, timestamp: time)
            + writer.eventRecord(event, timestamp: time + 1)
        let capture = try BTSnoopReader.readAll(file)
        #expect(capture.datalink == datalink)
        #expect(capture.error == nil)
        #expect(capture.records.count == 2)
        let record = try #require(capture.records.first)
        #expect(record.flags == 3)
        #expect(record.hciEvent(datalink: datalink).map(Array.init) == event)
        #expect(abs(record.unixTime - time) < 0.000_001)
        #expect(
            Array(file[0..<16]) == Array("btsnoop".utf8) + [
                0, 0, 0, 0, 1, 0, 0, 0x03, datalink == .hciUART ? 0xEA : 0xE9,
            ])
    }

    @Test func timestampConversion() {
        #expect(BTSnoopTime.unixSeconds(fromBTSnoop: 0x00dc_ddb3_0f2f_8000) == 0)
        #expect(BTSnoopTime.unixSeconds(fromBTSnoop: 0x00dc_ddb3_0f2f_8000 + 1_500_000) == 1.5)
        #expect(BTSnoopTime.btsnoopMicros(fromUnixSeconds: 2.25) == 0x00dc_ddb3_0f2f_8000 + 2_250_000)
        #expect(BTSnoopTime.unixSeconds(fromBTSnoop: 0) < 0)
        #expect(BTSnoopTime.btsnoopMicros(fromUnixSeconds: .nan) == BTSnoopTime.unixEpochOffset)
    }

    @Test func unencapsulatedRecordsUseTheFlags() {
        let sent = BTSnoopRecord(originalLength: 3, flags: 0x2, drops: 0, timestampMicros: 0, payload: [1, 2, 3])
        #expect(sent.hciEvent(datalink: .hciUnencapsulated) == nil)
        let acl = BTSnoopRecord(originalLength: 1, flags: 0x0, drops: 0, timestampMicros: 0, payload: [0x04])
        #expect(acl.hciEvent(datalink: .hciUART)?.isEmpty == true)
        #expect(acl.hciEvent(datalink: .hciUnencapsulated) == nil)
    }
}
