import Testing

@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

/// A batch (the live daemon's unit of work) gives the same events and counters as its events one by one.
@Suite struct GatewayPipelineBatchTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    func pipeline() -> GatewayPipeline {
        GatewayPipeline(
            decoder: BeaconDecoder(),
            engine: RegionEngine(regions: [], distance: DistanceEstimator(settings: DistanceSettings()), now: 0),
            includeDevices: false)
    }

    @Test func aBatchIsIngestedAsItsEventsOneByOne() throws {
        var batch: [CapturedHCIEvent] = [CapturedHCIEvent(timestamp: 99, bytes: [0x3E, 0x09, 0x02, 0x01])]
        for index in 0..<40 {
            let observation = Observation(
                timestamp: 100 + Double(index) / 10, beaconID: "", format: "ibeacon",
                identifiers: [Self.uuid, "1", String(index % 4)],
                address: BluetoothAddress(rawValue: 0xC0_FFEE_000000 | UInt64(index % 4)),
                rssi: -50 - index, measuredPower: -59)
            let report = try #require(SyntheticAdvertisement.report(for: observation))
            batch.append(
                CapturedHCIEvent(
                    timestamp: observation.timestamp, bytes: try #require(AdvertisingReportEncoder.legacyEvent(report)))
            )
        }
        var whole = pipeline()
        var wholeEvents: [EngineEvent] = []
        whole.ingest(batch, into: &wholeEvents)
        var single = pipeline()
        var singleEvents: [EngineEvent] = []
        for event in batch { single.ingest(event, into: &singleEvents) }
        #expect(wholeEvents == singleEvents)
        #expect(!wholeEvents.isEmpty)
        #expect(whole.counters == single.counters)
        #expect(whole.counters.hciEvents == 41)
        #expect(whole.counters.malformedEvents == 1)
    }
}
