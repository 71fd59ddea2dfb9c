import Testing

@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

@Suite struct GatewayPipelineTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    func observation(format: String, ids: [String], rssi: Int = -60, at time: Timestamp = 100) -> Observation {
        Observation(
            timestamp: time, beaconID: "x", format: format, identifiers: ids,
            address: BluetoothAddress(rawValue: 0xC0_FFEE_000001), rssi: rssi, measuredPower: -59)
    }

    func pipeline(regions: [RegionRule] = []) -> GatewayPipeline {
        GatewayPipeline(
            decoder: BeaconDecoder(),
            engine: RegionEngine(regions: regions, distance: DistanceEstimator(settings: DistanceSettings()), now: 0),
            includeDevices: false)
    }

    @Test(arguments: [
        ("ibeacon", [uuid, "1", "2"], "ibeacon:\(uuid):1:2"),
        ("altbeacon", [uuid, "7", "65535"], "altbeacon:\(uuid):7:65535"),
        (
            "eddystone-uid", ["0x00010203040506070809", "0x0a0b0c0d0e0f"],
            "eddystone-uid:00010203040506070809:0a0b0c0d0e0f"
        ),
    ])
    func syntheticFramesDecodeBackToTheSameBeacon(format: String, ids: [String], expectedID: String) throws {
        let source = observation(format: format, ids: ids)
        let report = try #require(SyntheticAdvertisement.report(for: source))
        let event = try #require(AdvertisingReportEncoder.legacyEvent(report))
        let parsed = try HCIEventParser.parse(event, timestamp: 100)
        #expect(parsed == [report])
        let observations = BeaconDecoder().decode(parsed[0]).observations(includeDevices: false)
        #expect(observations.map(\.beaconID) == [expectedID])
        #expect(observations.first?.rssi == -60)
    }

    @Test func unknownFormatsHaveNoSyntheticPayload() {
        #expect(SyntheticAdvertisement.payload(for: observation(format: "exposure-notification", ids: ["0x00"])) == nil)
        #expect(
            SyntheticAdvertisement.payload(for: observation(format: "ibeacon", ids: ["not-a-uuid", "1", "2"])) == nil)
    }

    @Test func ingestCountsMalformedEventsAndKeepsGoing() throws {
        var pipeline = pipeline()
        var events: [EngineEvent] = []
        pipeline.ingest(CapturedHCIEvent(timestamp: 1, bytes: [0x3E, 0x09, 0x02, 0x01]), into: &events)
        let good = try #require(
            SyntheticAdvertisement.report(for: observation(format: "ibeacon", ids: [Self.uuid, "1", "2"])))
        pipeline.ingest(
            CapturedHCIEvent(timestamp: 100, bytes: try #require(AdvertisingReportEncoder.legacyEvent(good))),
            into: &events)
        #expect(pipeline.counters.hciEvents == 2)
        #expect(pipeline.counters.malformedEvents == 1)
        #expect(pipeline.lastDecodeError != nil)
        #expect(pipeline.counters.beacons == 1)
        #expect(events.contains { if case .presence(let p) = $0 { p.state == .seen } else { false } })
    }

    @Test func scanResponseBeaconCarriesTheNameFromTheAdvertisingPDU() throws {
        var pipeline = pipeline()
        var events: [EngineEvent] = []
        let address = BluetoothAddress(rawValue: 0xA4_C1_38_00_00_01)
        let name: [UInt8] = Array("GVH5072".utf8)
        let adv = AdvertisingReport(
            timestamp: 10, eventType: 0x13, isExtended: false, address: address,
            addressType: .publicDevice, rssi: -70, txPower: nil,
            data: [UInt8(name.count + 1), 0x09] + name)
        var beacon = observation(format: "ibeacon", ids: [Self.uuid, "3", "4"], at: 10)
        beacon.address = address
        var response = try #require(SyntheticAdvertisement.report(for: beacon))
        response.eventType = 0x1B
        pipeline.ingest(adv, into: &events)
        pipeline.ingest(response, into: &events)
        let names = events.compactMap { event -> String? in
            if case .presence(let p) = event { return p.beacon.name } else { return nil }
        }
        #expect(names == ["GVH5072"])
    }
}
