import Testing

@testable import BeaconFormats
@testable import BeaconModel

/// The real Android capture (Tests/Fixtures/README.md): every advertising report event decodes, the rest is
/// skipped, and the Govee H5072's iBeacon inside its scan response is found.
@Suite struct CaptureDecodeTests {
    struct Summary {
        var advertisingEvents = 0
        var reports: [DecodedAdvertisement] = []
        var otherEvents = 0
        var failures: [DecodeError] = []
    }

    func decodeCapture() throws -> Summary {
        let capture = try BTSnoopReader.readAll(DecodingFixtures.capture)
        let decoder = BeaconDecoder()
        var summary = Summary()
        for record in capture.records {
            guard let event = record.hciEvent(datalink: capture.datalink) else { continue }
            do {
                let reports = try HCIEventParser.parse(Array(event), timestamp: record.unixTime, h4: false)
                if reports.isEmpty { summary.otherEvents += 1 } else { summary.advertisingEvents += 1 }
                summary.reports += reports.map(decoder.decode)
            } catch {
                summary.failures.append(error)
            }
        }
        return summary
    }

    @Test func everyAdvertisingEventDecodes() throws {
        let summary = try decodeCapture()
        #expect(summary.failures.isEmpty)
        #expect(summary.advertisingEvents == 412)
        #expect(summary.reports.count == 412)
        #expect(summary.otherEvents > 0)
        #expect(summary.reports.allSatisfy { $0.advertisingData.overrunOffset == nil })
        let addresses = Set(summary.reports.map(\.report.address))
        #expect(addresses.count == 36)
    }

    @Test func goveeIBeaconInScanResponse() throws {
        let summary = try decodeCapture()
        let govee = summary.reports.filter { $0.beacons.contains { $0.format == "ibeacon" } }
        #expect(!govee.isEmpty)
        #expect(govee.allSatisfy { $0.report.isScanResponse })
        let beacon = try #require(govee.first?.beacons.first)
        // UUID bytes spell "INTELLI_ROCKS_HW"; major 0x5072, minor 0xf2ff, measured power 0xc2.
        #expect(beacon.identifiers == ["494e5445-4c4c-495f-524f-434b535f4857", "20594", "62207"])
        #expect(beacon.beaconID == "ibeacon:494e5445-4c4c-495f-524f-434b535f4857:20594:62207")
        #expect(beacon.measuredPower == -62)
        let observation = try #require(govee.first?.observations(includeDevices: false).first)
        #expect(observation.address.description.hasPrefix("A4:C1:38"))
        #expect(observation.rssi != nil)
    }

    @Test func everyReportIsASightingWithDevicesIncluded() throws {
        let summary = try decodeCapture()
        for decoded in summary.reports {
            let observations = decoded.observations(includeDevices: true)
            #expect(observations.count >= 1)
            #expect(observations.allSatisfy { $0.timestamp > 1_600_000_000 })
        }
    }
}

@Suite struct ObservationPathTests {
    /// The daemon's direct path gives exactly what the full decode gives, on the capture and on every frame.
    @Test func directObservationsEqualFullDecode() throws {
        let capture = try BTSnoopReader.readAll(DecodingFixtures.capture)
        var reports: [AdvertisingReport] = []
        for record in capture.records {
            guard let event = record.hciEvent(datalink: capture.datalink) else { continue }
            reports += try HCIEventParser.parse(Array(event), timestamp: record.unixTime, h4: false)
        }
        for (_, hex) in TestFrames.allAdvertisingPayloads {
            reports.append(
                AdvertisingReport(
                    timestamp: 3, eventType: 0x10, isExtended: false, address: TestFrames.address,
                    addressType: .publicDevice, rssi: -40, txPower: nil, data: DecodingFixtures.hex(hex)))
        }
        #expect(reports.count == 412 + TestFrames.allAdvertisingPayloads.count)
        let decoder = BeaconDecoder()
        for report in reports {
            for includeDevices in [false, true] {
                #expect(
                    decoder.observations(of: report, includeDevices: includeDevices)
                        == decoder.decode(report).observations(includeDevices: includeDevices))
            }
        }
    }
}
