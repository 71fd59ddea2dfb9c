import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import BeaconTracking

/// The parts of Home Assistant discovery decided in the core: which region pairs are announced, names for two
/// gateways, and the events that keep entities honest (presence snapshot, the null sighting on away).
@Suite struct HomeAssistantDiscoveryRulesTests {
    typealias F = EngineFixtures
    static let keys = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7"

    @Test(arguments: [
        (RegionMatch(), keys, true),
        (RegionMatch.iBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), keys, true),
        (RegionMatch.iBeacon(uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0", major: 1, minor: 7), keys, true),
        (RegionMatch.iBeacon(uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0", major: 1, minor: 8), keys, false),
        (RegionMatch.iBeacon(uuid: "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"), keys, false),
        (RegionMatch(format: "*", identifiers: [nil, "01"]), keys, true),
        (RegionMatch.eddystone(namespace: "0x00112233445566778899"), keys, false),
        (
            RegionMatch.eddystone(namespace: "0x00112233445566778899"),
            "eddystone-uid:00112233445566778899:aabbccddeeff", true
        ),
        (RegionMatch(namePattern: "Keys*"), keys, true),
        (RegionMatch(address: BluetoothAddress(string: "C0:FF:EE:00:00:07")), keys, true),
        (RegionMatch(address: BluetoothAddress(string: "C0:FF:EE:00:00:07")), "mac:C0:FF:EE:00:00:07", true),
        (RegionMatch(address: BluetoothAddress(string: "C0:FF:EE:00:00:07")), "mac:C0:FF:EE:00:00:08", false),
        (RegionMatch(format: "mac"), "eddystone-tlm:C0:FF:EE:00:00:08", false),
    ])
    func regionPairsAreAnnouncedOnlyWhereTheMatchCanSelectTheBeacon(
        match: RegionMatch, beaconID: String, expected: Bool
    ) {
        #expect(match.canSelect(beaconID: beaconID) == expected)
    }

    @Test(arguments: [
        ("front_door", "Front door"), ("kitchen", "Kitchen"), ("Office", "Office"),
        ("living-room 2", "Living room 2"), ("_x__y_", "X y"),
    ])
    func regionTitles(name: String, title: String) {
        #expect(HomeAssistantDiscovery.Region(name: name).title == title)
    }

    @Test func twoGatewaysShareOneBeaconDeviceAndNameTheirEntities() throws {
        var settings = TopicSettings()
        settings.homeAssistant.enabled = true
        func configs(_ gateway: String, _ name: String) throws -> [String: JSONValue] {
            let discovery = HomeAssistantDiscovery(
                layout: TopicLayout(settings: settings, gatewayID: gateway),
                gatewayName: name, softwareVersion: "1", sensorExpiry: 65)
            let messages = discovery.messages(beacons: [.init(id: Self.keys, name: "Keys")], regions: [])
            var out: [String: JSONValue] = [:]
            // The beacon's entities only (the first four configs are the gateway device's own sensors).
            for message in messages.dropFirst(4) {
                let suffix = String(message.topic.split(separator: "/")[3].split(separator: "_").last!)
                out[suffix] = try JSONValue(parsing: message.payload)
            }
            return out
        }
        let kitchen = try configs("pi-kitchen", "Kitchen gateway")
        let hall = try configs("pi-hall", "Hall gateway")
        #expect(Set(kitchen.keys) == ["tracker", "distance", "rssi", "presence"])
        for (suffix, config) in kitchen {
            let other = try #require(hall[suffix])
            // The same device block from both gateways: Home Assistant keeps one device, nothing flips.
            #expect(config["device"] == other["device"])
            #expect(config["device"]?["via_device"] == nil)
            #expect(config["unique_id"] != other["unique_id"])
            #expect(config["name"] != other["name"])
        }
        #expect(kitchen["tracker"]?["name"] == .string("Kitchen gateway"))
        #expect(hall["distance"]?["name"] == .string("Hall gateway distance"))
        #expect(kitchen["rssi"]?["name"] == .string("Kitchen gateway RSSI"))
    }

    @Test func sensorExpiryIsTheAwayTimeoutPlusOneSightingInterval() {
        var settings = TrackerSettings.default
        settings.awayTimeout = 60
        settings.publish.sightingInterval = 4.5
        #expect(HomeAssistantDiscovery.sensorExpiry(for: settings) == 65)
    }

    @Test func awayIsFollowedByASightingWithoutRSSIOrDistance() throws {
        var encoder = EventEncoder(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: "gw1"),
            sequences: SequenceBlock(first: 1, end: 10))
        let beacon = EventEncoderTests.beacon
        let seen = try encoder.encode(.presence(PresenceEvent(time: 10, state: .seen, beacon: beacon)))
        #expect(seen.map(\.kind) == [.presence])
        let away = try encoder.encode(.presence(PresenceEvent(time: 70, state: .away, beacon: beacon)))
        #expect(away.map(\.kind) == [.presence, .sighting])
        #expect(away[1].topic == "beaconbridge/gw1/sighting/" + beacon.beaconID)
        let json = try JSONValue(parsing: away[1].payload)
        #expect(json["rssi"] == .null && json["distance"] == .null && json["rssi_smoothed"] == .null)
        #expect(json["beacon_id"] == .string(beacon.beaconID) && json["time"] == .int(70))
        #expect(UInt64(away.count) <= EventEncoder.maxEnvelopesPerEvent)
    }

    @Test func presenceSnapshotRepeatsTheCurrentStateOfEveryTrackedBeacon() {
        var engine = F.engine()
        #expect(engine.presenceSnapshot(at: F.t0).isEmpty)
        _ = F.feed(&engine, minor: 1, from: 0, to: 2, rssi: -60)
        _ = F.feed(&engine, minor: 2, from: 0, to: 2, rssi: -60)
        let present = F.presenceEvents(engine.presenceSnapshot(at: F.t0 + 3))
        #expect(present.map { "\($0.state) \($0.beacon.beaconID)" } == ["seen \(F.id(1))", "seen \(F.id(2))"])
        #expect(present.allSatisfy { $0.time == F.t0 + 3 })
        // Minor 2 goes quiet past the away timeout; minor 1 keeps reporting.
        let later = F.feed(&engine, minor: 1, from: 2, to: 200, step: 1, rssi: -60)
        #expect(F.presenceEvents(later).map { "\($0.state) \($0.beacon.beaconID)" } == ["away \(F.id(2))"])
        let snapshot = F.presenceEvents(engine.presenceSnapshot(at: F.t0 + 200))
        #expect(snapshot.map { "\($0.state) \($0.beacon.beaconID)" } == ["seen \(F.id(1))", "away \(F.id(2))"])
    }
}
