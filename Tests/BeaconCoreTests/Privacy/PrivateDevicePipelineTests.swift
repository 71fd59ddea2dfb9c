import Testing

@testable import BeaconEvents
@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

/// Resolved devices through the whole pure pipeline: one beacon `irk:<name>` across address rotations, with
/// presence, regions, the configured measured power and away timeout; unresolved private addresses never
/// published unless opted in.
@Suite struct PrivateDevicePipelineTests {
    static let key = IdentityResolvingKey(text: "ec0234a357c8ad05341010a60a397d9b")!
    static let strangerKey = IdentityResolvingKey(text: "00112233445566778899aabbccddeeff")!
    /// Flags and Apple manufacturer data as an iPhone sends (no beacon format).
    static let phoneData: [UInt8] = [0x02, 0x01, 0x1A, 0x07, 0xFF, 0x4C, 0x00, 0x10, 0x02, 0x0B, 0x00]

    func report(
        _ address: BluetoothAddress, at time: Timestamp, rssi: Int8 = -55,
        type: AddressType = .randomDevice, data: [UInt8] = phoneData
    ) -> AdvertisingReport {
        AdvertisingReport(
            timestamp: time, eventType: 0x13, isExtended: false, address: address, addressType: type,
            rssi: rssi, txPower: nil, data: data)
    }

    func pipeline(
        devices: PrivateDeviceSettings, includeDevices: Bool = true, regions: [RegionRule] = [],
        awayTimeouts: [String: Double] = [:]
    ) -> GatewayPipeline {
        var settings = TrackerSettings(awayTimeout: 30)
        settings.awayTimeoutOverrides = awayTimeouts
        return GatewayPipeline(
            decoder: BeaconDecoder(),
            engine: RegionEngine(
                settings: settings, regions: regions,
                distance: DistanceEstimator(settings: DistanceSettings()), now: 0),
            includeDevices: includeDevices, devices: devices)
    }

    static let devices = PrivateDeviceSettings(known: [
        PrivateDevice(name: "alice-phone", key: key, measuredPower: -70, awayTimeout: 300)
    ])

    func ids(_ events: [EngineEvent]) -> [String] {
        events.map { event in
            switch event {
            case .sighting(let s): "sighting \(s.beacon.beaconID)"
            case .presence(let p): "\(p.state) \(p.beacon.beaconID)"
            case .region(let r): "\(r.kind) \(r.region) \(r.beaconID)"
            }
        }
    }

    @Test func aRotatingDeviceIsOneBeaconWithPresenceAndRegions() throws {
        let region = RegionRule(
            name: "hall", match: RegionMatch(format: "irk", identifiers: ["alice-phone"]),
            enter: .rssi(-80), enterEvidence: 1, minDwell: 0, exitPeriod: 20)
        var pipeline = pipeline(devices: Self.devices, regions: [region], awayTimeouts: ["irk:alice-phone": 300])
        var events: [EngineEvent] = []
        var addresses: [BluetoothAddress] = []
        for step in 0..<40 {
            // A new address every 10 reports (the device rotates), each heard once a second.
            let address = BluetoothAddress.resolvablePrivate(prand: 0x1000 + UInt32(step / 10) * 77, key: Self.key)
            if addresses.last != address { addresses.append(address) }
            pipeline.ingest(report(address, at: Double(step)), into: &events)
        }
        #expect(Set(addresses).count == 4)
        let all = ids(events)
        #expect(all.filter { $0.hasPrefix("seen") } == ["seen irk:alice-phone"])
        #expect(all.contains("enter hall irk:alice-phone"))
        #expect(!all.contains { $0.contains("mac:") })
        #expect(pipeline.counters.resolvedReports == 40)
        #expect(pipeline.resolver.counters.blocks == 4, "one block per new address, the key matched as written")
        let sighting = try #require(events.compactMap { if case .sighting(let s) = $0 { s.beacon } else { nil } }.last)
        #expect(sighting.format == "irk")
        #expect(sighting.identifiers == ["alice-phone"])
        #expect(sighting.measuredPower == -70)
        #expect(sighting.address == addresses.last)
        #expect(ESPresenseMapping.deviceID(for: sighting) == "irk:alice-phone", "the name, never the key")

        // The device's own away timeout (300 s), not the gateway's (30 s): past the gateway's it is `stale` and
        // its region is held; at its own it turns away and the region exits with it.
        events = pipeline.advance(to: 39 + 100)
        #expect(ids(events) == ["stale irk:alice-phone"])
        events = pipeline.advance(to: 39 + 301)
        #expect(ids(events) == ["exit hall irk:alice-phone", "away irk:alice-phone"])

        let rows = pipeline.takeSeenDeviceKeys()
        #expect(
            rows == [
                SeenDeviceKey(name: "alice-phone", fingerprint: Self.key.fingerprint, order: .asWritten, lastSeen: 39)
            ])
        #expect(pipeline.takeSeenDeviceKeys().isEmpty)
    }

    @Test func unresolvedPrivateAddressesAreNeverPublishedByDefault() {
        var pipeline = pipeline(devices: Self.devices, includeDevices: true)
        var events: [EngineEvent] = []
        let stranger = BluetoothAddress.resolvablePrivate(prand: 0x2222, key: Self.strangerKey)
        let staticRandom = BluetoothAddress(rawValue: 0xC1_22_33_44_55_66)
        for step in 0..<5 {
            pipeline.ingest(report(stranger, at: Double(step)), into: &events)
            pipeline.ingest(report(staticRandom, at: Double(step)), into: &events)
        }
        let all = ids(events)
        #expect(!all.contains { $0.contains(stranger.description) })
        #expect(all.contains("seen mac:\(staticRandom.description)"), "a static random address is no private address")
        #expect(pipeline.counters.unresolvedPrivateReports == 5)
        #expect(pipeline.resolver.counters.negativeHits == 4)
    }

    @Test func beaconsWithTheirOwnIdentifiersAreKeptFromUnresolvedAddresses() throws {
        var pipeline = pipeline(devices: Self.devices, includeDevices: true)
        var events: [EngineEvent] = []
        let stranger = BluetoothAddress.resolvablePrivate(prand: 0x3333, key: Self.strangerKey)
        let iBeacon = Observation(
            timestamp: 0, beaconID: "", format: "ibeacon",
            identifiers: ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1", "2"],
            address: stranger, rssi: -60, measuredPower: -59)
        let data = try #require(SyntheticAdvertisement.payload(for: iBeacon))
        pipeline.ingest(report(stranger, at: 1, data: data), into: &events)
        #expect(ids(events).contains("seen ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"))
        #expect(!ids(events).contains { $0.contains("mac:") })
    }

    @Test func publishUnresolvedOptsBackIn() {
        var devices = Self.devices
        devices.publishUnresolved = true
        var pipeline = pipeline(devices: devices, includeDevices: true)
        var events: [EngineEvent] = []
        let stranger = BluetoothAddress.resolvablePrivate(prand: 0x2222, key: Self.strangerKey)
        pipeline.ingest(report(stranger, at: 1), into: &events)
        #expect(ids(events).contains("seen mac:\(stranger.description)"))
    }

    @Test func reloadKeepsLearnedOrdersOfDevicesThatStay() {
        let reversed = IdentityResolvingKey(text: "9b7d390aa610103405adc857a33402ec")!
        var pipeline = pipeline(devices: PrivateDeviceSettings(known: [PrivateDevice(name: "tag", key: reversed)]))
        var events: [EngineEvent] = []
        pipeline.ingest(report(BluetoothAddress(string: "70:81:94:0D:FB:AA")!, at: 1), into: &events)
        #expect(pipeline.resolver.orders == [.reversed])
        pipeline.reload(
            devices: PrivateDeviceSettings(known: [
                PrivateDevice(name: "new", key: Self.strangerKey),
                PrivateDevice(name: "tag", key: reversed),
            ]))
        #expect(pipeline.resolver.orders == [nil, .reversed])
        #expect(pipeline.privateDevices.map(\.name) == ["new", "tag"])
    }
}
