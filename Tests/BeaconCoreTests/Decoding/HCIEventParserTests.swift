import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct HCIEventParserTests {
    @Test func legacyEventWithTwoReportsAndH4() throws {
        let reports = try HCIEventParser.parse(TestFrames.legacyTwoReports, timestamp: 42)
        #expect(reports.count == 2)
        let first = try #require(reports.first)
        #expect(first.eventType == 0x10)  // ADV_NONCONN_IND -> legacy bit only
        #expect(!first.isExtended)
        #expect(first.address == TestFrames.address)
        #expect(first.addressType == .randomDevice)
        #expect(first.rssi == -60)
        #expect(first.txPower == nil)
        #expect(first.timestamp == 42)
        #expect(first.data == DecodingFixtures.hex(TestFrames.iBeacon))
        let second = reports[1]
        #expect(second.eventType == 0x1B)
        #expect(second.isScanResponse)
        #expect(second.rssi == nil)  // 127 = not available
        #expect(second.address == BluetoothAddress(string: "06:05:04:03:02:01"))
        #expect(second.addressType == .publicDevice)
    }

    @Test func sameEventWithoutH4ParsesAlike() throws {
        let withH4 = try HCIEventParser.parse(TestFrames.legacyTwoReports)
        let withoutH4 = try HCIEventParser.parse(Array(TestFrames.legacyTwoReports.dropFirst()))
        #expect(withH4 == withoutH4)
    }

    @Test(arguments: [(UInt8(0), UInt16(0x13)), (1, 0x15), (2, 0x12), (3, 0x10), (4, 0x1B)])
    func legacyEventTypesMapToExtendedBits(legacy: UInt8, extended: UInt16) throws {
        var event = TestFrames.legacyEvent([0x02, 0x01, 0x06])
        event[4] = legacy
        let report = try #require(try HCIEventParser.parse(event).first)
        #expect(report.eventType == extended)
        #expect(report.eventType & 0x10 != 0)
    }

    @Test func unknownLegacyEventTypeNamesItsOffset() {
        var event = TestFrames.legacyEvent([])
        event[4] = 0x07
        #expect(throws: DecodeError(offset: 4, reason: "unknown legacy advertising event type 7")) {
            try HCIEventParser.parse(event)
        }
    }

    @Test func extendedReportWithUnavailableTxPower() throws {
        let reports = try HCIEventParser.parse(TestFrames.extendedReport, timestamp: 7)
        let report = try #require(reports.first)
        #expect(reports.count == 1)
        #expect(report.isExtended)
        #expect(report.eventType == 0)
        #expect(report.dataStatus == 0)
        #expect(report.txPower == nil)
        #expect(report.rssi == -70)
        #expect(report.advertisingSID == 3)
        #expect(report.addressType == .randomDevice)
        #expect(report.data == DecodingFixtures.hex(TestFrames.eddystoneUID))
    }

    @Test func extendedReportFieldsAndRSSIUnavailable() throws {
        let event = TestFrames.extendedEvent(
            eventType: 0x0023, sid: 1, txPower: 0xF4, rssi: 0x7F, data: [0x02, 0x01, 0x06])
        let report = try #require(try HCIEventParser.parse(event).first)
        #expect(report.txPower == -12)
        #expect(report.rssi == nil)
        #expect(report.dataStatus == 1)
        #expect(report.eventType == 0x0023)
    }

    @Test func explicitFraming() throws {
        // A Connection Request event (code 0x04) whose first parameter byte equals its length minus 3 would
        // look like H4; the explicit flag settles it.
        let connectionRequest = DecodingFixtures.hex("040a 07 05040302 01 0c0000 01")
        #expect(HCIEventParser.hasH4Indicator(connectionRequest) == false)
        let ambiguous = DecodingFixtures.hex("040a 09 05040302 01 0c0000 01")
        #expect(HCIEventParser.hasH4Indicator(ambiguous))
        #expect(try HCIEventParser.parse(ambiguous, h4: false) == [])
        #expect(try HCIEventParser.parse(TestFrames.legacyTwoReports, h4: true).count == 2)
        #expect(throws: DecodeError(offset: 0, reason: "H4 packet type 2 is not an HCI event (0x04)")) {
            try HCIEventParser.parse([0x02, 0x00, 0x00], h4: true)
        }
    }

    @Test func nonAdvertisingEventsYieldNothing() throws {
        // Command Complete (0x0E), LE Connection Complete (meta 0x01), HCI event with no parameters.
        #expect(try HCIEventParser.parse(DecodingFixtures.hex("0e0401 0c2000")) == [])
        #expect(
            try HCIEventParser.parse(DecodingFixtures.hex("3e13 01 00 0000 00 00 112233445566 2800 0000 f401 00")) == []
        )
        #expect(try HCIEventParser.parse(DecodingFixtures.hex("0400")) == [])  // Connection Request without params
        #expect(try HCIEventParser.parse(DecodingFixtures.hex("04 0e0401 0c2000")) == [])
    }

    @Test func malformedEventsNameTheOffset() {
        // Declared parameter length larger than the bytes present: points at the length byte.
        #expect(throws: DecodeError(offset: 1, reason: "event declares 16 parameter bytes, 2 present")) {
            try HCIEventParser.parse(DecodingFixtures.hex("3e10 0201"))
        }
        // Data length running past the event.
        var event = TestFrames.legacyEvent([0x02, 0x01, 0x06])
        event[12] = 0x09
        #expect(throws: DecodeError.self) { try HCIEventParser.parse(event) }
        #expect((try? HCIEventParser.parse(event)) == nil)
        // Extra bytes after the last report.
        let padded = TestFrames.legacyEvent([]) + [0x00]
        var fixed = padded
        fixed[1] += 1
        #expect(throws: DecodeError(offset: 14, reason: "1 byte(s) after the last report")) {
            try HCIEventParser.parse(fixed)
        }
        #expect(throws: DecodeError.self) { try HCIEventParser.parse([]) }
    }

    /// Truncating valid events at every length never traps: each prefix is either a clean error or (for a
    /// prefix that happens to be a complete event) a report list.
    @Test func everyPrefixOfValidEventsIsHandled() {
        let events =
            [TestFrames.legacyTwoReports, TestFrames.extendedReport]
            + TestFrames.allAdvertisingPayloads.map { TestFrames.legacyEvent(DecodingFixtures.hex($0.1)) }
        let decoder = BeaconDecoder()
        var errors = 0
        for event in events {
            for length in 0..<event.count {
                do {
                    for report in try HCIEventParser.parse(Array(event[0..<length])) {
                        _ = decoder.decode(report).observations(includeDevices: true)
                    }
                } catch {
                    #expect(error.offset >= 0 && error.offset <= length)
                    errors += 1
                }
            }
        }
        #expect(errors > 0)
    }

    @Test func everyPrefixOfAdvertisingDataDecodes() {
        let decoder = BeaconDecoder()
        for (_, hex) in TestFrames.allAdvertisingPayloads {
            let bytes = DecodingFixtures.hex(hex)
            for length in 0...bytes.count {
                let report = AdvertisingReport(
                    timestamp: 0, eventType: 0x10, isExtended: false,
                    address: TestFrames.address, addressType: .publicDevice,
                    rssi: -50, txPower: nil, data: Array(bytes[0..<length]))
                let decoded = decoder.decode(report)
                #expect(decoded.advertisingData.parsedEnd <= length)
                _ = decoded.observations(includeDevices: true)
            }
        }
    }
}
