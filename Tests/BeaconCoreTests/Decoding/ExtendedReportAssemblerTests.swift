import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct ExtendedReportAssemblerTests {
    func fragment(
        _ data: [UInt8], status: UInt16, sid: UInt8 = 1, address: BluetoothAddress = TestFrames.address,
        time: Timestamp = 0
    ) -> AdvertisingReport {
        var report = AdvertisingReport(
            timestamp: time, eventType: status << 5, isExtended: true, address: address,
            addressType: .publicDevice, rssi: -60, txPower: nil, data: data)
        report.advertisingSID = sid
        return report
    }

    @Test func joinsFragmentsPerAddressAndSID() {
        var assembler = ExtendedReportAssembler()
        let other = BluetoothAddress(string: "11:22:33:44:55:66")!
        #expect(assembler.add(fragment([1, 2], status: 1)) == nil)
        #expect(assembler.add(fragment([9], status: 1, address: other)) == nil)
        #expect(assembler.add(fragment([3, 4], status: 1, sid: 2)) == nil)
        #expect(assembler.pendingCount == 3)
        let joined = assembler.add(fragment([5], status: 0, time: 3)) ?? fragment([], status: 3)
        #expect(joined.data == [1, 2, 5])
        #expect(joined.dataStatus == 0)
        #expect(joined.timestamp == 3)
        let truncated = assembler.add(fragment([6], status: 2, sid: 2)) ?? fragment([], status: 3)
        #expect(truncated.data == [3, 4, 6])
        #expect(truncated.dataStatus == 2)
        #expect(assembler.pendingCount == 1)
    }

    @Test func completeAndLegacyReportsPassThrough() throws {
        var assembler = ExtendedReportAssembler()
        let complete = fragment([1], status: 0)
        #expect(assembler.add(complete) == complete)
        let legacy = try #require(try HCIEventParser.parse(TestFrames.legacyTwoReports).first)
        #expect(assembler.add(legacy) == legacy)
    }

    @Test func oversizedChainIsMarkedTruncatedAndOldChainsAreDropped() {
        var assembler = ExtendedReportAssembler(maxPending: 2, maxDataLength: 40)
        #expect(assembler.add(fragment([UInt8](repeating: 7, count: 30), status: 1)) == nil)
        let cut = assembler.add(fragment([UInt8](repeating: 8, count: 30), status: 1)) ?? fragment([], status: 3)
        #expect(cut.data.count == 40)
        #expect(cut.dataStatus == 2)
        for sid in UInt8(0)..<3 { _ = assembler.add(fragment([sid], status: 1, sid: sid)) }
        #expect(assembler.pendingCount == 2)
        #expect(assembler.droppedChains == 1)
        assembler.reset()
        #expect(assembler.pendingCount == 0)
    }
}
