import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import DeviceProtocols

/// Tests/HomeAssistant/fixtures/dfu-update.jsonl is what the daemon published in the QEMU scenario `gatt` (its
/// read, write and firmware update over MQTT; re-recorded as docs/testing.md says) and what the Home Assistant
/// stage feeds Home Assistant Core. This fails when the discovery the daemon makes today differs from the
/// fixture's, so the fixture cannot go stale silently: re-record it when the discovery changes on purpose.
@Suite struct DFUUpdateFixtureTests {
    struct Message {
        var topic: String
        var payload: String
    }

    static func fixture() throws -> [Message] {
        let path = DecodingFixtures.packageRoot() + "/Tests/HomeAssistant/fixtures/dfu-update.jsonl"
        let bytes = try #require(DecodingFixtures.readFile(path), "cannot read \(path)")
        return try String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { line in
            let json = try JSONValue(parsing: String(line))
            guard case .string(let topic)? = json["topic"], case .string(let payload)? = json["payload"] else {
                throw FixtureError.malformed(String(line.prefix(80)))
            }
            return Message(topic: topic, payload: payload)
        }
    }

    enum FixtureError: Error { case malformed(String) }

    @Test func discoveryMatchesTheDaemonsOwn() throws {
        let messages = try Self.fixture()
        let info = try #require(messages.last { $0.topic == "beaconbridge/e2e/device/peer/info" })
        guard case .string(let addressText)? = try JSONValue(parsing: info.payload)["address"],
            let address = BluetoothAddress(string: addressText)
        else {
            Issue.record("no address in \(info.payload)")
            return
        }
        let recorded = messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.contains("/peer_") }
        let first = try JSONValue(parsing: try #require(recorded.first).payload)
        guard case .string(let version)? = first["origin"]?["sw_version"] else {
            Issue.record("no origin.sw_version in the fixture")
            return
        }
        let discovery = HomeAssistantDiscovery(
            layout: TopicLayout(settings: TopicSettings(), gatewayID: "e2e"), gatewayName: "e2e",
            softwareVersion: version)
        let device = GATTSettings.Device(address: address, name: "peer", firmware: "/tmp/fw/peer-app.zip")
        let current = discovery.deviceInfoMessages(device)
        #expect(Set(recorded.map(\.topic)) == Set(current.map(\.topic)))
        for message in current {
            let old = recorded.last { $0.topic == message.topic }
            #expect(old?.payload == message.payload, "\(message.topic) differs from the fixture: re-record it")
        }
        // What the Home Assistant stage checks is in it: rising progress, the end installed == latest.
        let states = try messages.filter { $0.topic == "beaconbridge/e2e/device/peer/update" }.map {
            try JSONValue(parsing: $0.payload)
        }
        let percents = states.compactMap { state -> Int64? in
            guard case .int(let percent)? = state["update_percentage"] else { return nil }
            return percent
        }
        #expect(percents.count >= 3 && percents == percents.sorted())
        #expect(states.last?["installed_version"] == states.last?["latest_version"])
    }
}
