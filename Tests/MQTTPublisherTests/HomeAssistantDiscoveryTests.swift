import BeaconEvents
import BeaconFormats
import Foundation
import MQTTPublisher
import TestSupport
import Testing

/// Discovery configs as a real broker delivers them, checked key by key against the table in docs/mqtt.md,
/// and republished when Home Assistant announces `online`.
@Suite(.serialized) struct HomeAssistantDiscoveryTests {
    /// Object-id suffix -> documented keys, parsed from docs/mqtt.md.
    static func documentedKeys() throws -> [String: Set<String>] {
        let thisFile = #filePath
        let docs = URL(fileURLWithPath: thisFile).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/mqtt.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        guard let section = text.components(separatedBy: "Keys of each config").last else { return [:] }
        var table: [String: Set<String>] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2 else { continue }
            let entity = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            table[entity] = Set(
                cells[1].split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                })
        }
        return table
    }

    @Test func discoveryConfigsMatchTheDocumentedKeysAndAreRepublishedWhenHomeAssistantComesOnline() async throws {
        let documented = try HomeAssistantDiscoveryTests.documentedKeys()
        #expect(documented.count == 9)
        let broker = try MosquittoProcess()
        try await broker.start()
        var topics = TopicSettings()
        topics.homeAssistant.enabled = true
        let layout = TopicLayout(settings: topics, gatewayID: "hall-gw")
        let beacons = [
            HomeAssistantDiscovery.Beacon(id: EventFactory.beacon(1, time: 0).beaconID, name: "Keys"),
            HomeAssistantDiscovery.Beacon(id: "eddystone-uid:0x00112233445566778899:0xaabbccddeeff", name: "Bag"),
        ]
        // "front door" selects every beacon, "kitchen" only iBeacons of one UUID: no kitchen entity for the
        // Eddystone beacon, whose state would stay unknown forever.
        let regions = [
            HomeAssistantDiscovery.Region(name: "kitchen", match: .iBeacon(uuid: EventFactory.uuid)),
            HomeAssistantDiscovery.Region(name: "front door"),
        ]
        let pairs = [(0, 0), (1, 0), (1, 1)]  // (region, beacon)
        let discovery = HomeAssistantDiscovery(
            layout: layout, gatewayName: "Hall gateway", softwareVersion: "0.1.0",
            sensorExpiry: 65)
        let messages = discovery.messages(beacons: beacons, regions: regions)
        // The gateway's four (backlog, reports per second, beacons heard, last report), four per beacon, one per
        // region and beacon that matches.
        #expect(messages.count == 4 + beacons.count * 4 + pairs.count)

        let subscriber = try TestSubscriber(port: broker.port, patterns: ["homeassistant/#"])
        try await subscriber.start()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: layout),
            outbox: nil)
        let notices = NoticeLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in publisher.notices { notices.append(notice) } }
            try await withRunningPublisher(publisher) {
                publisher.setDiscovery(messages)
                try await waitUntil("discovery configs", timeout: 60) {
                    subscriber.messages(under: "homeassistant/").filter { $0.topic.hasSuffix("/config") }.count
                        >= messages.count
                }
                subscriber.publish(topic: "homeassistant/status", payload: "online")
                try await waitUntil("republished after homeassistant/status online", timeout: 60) {
                    subscriber.messages(under: "homeassistant/").filter { $0.topic.hasSuffix("/config") }.count >= 2
                        * messages.count
                }
            }
            try await group.waitForAll()
        }
        await subscriber.stop()
        #expect(notices.all.contains(.snapshotRequested(.connected)))
        #expect(notices.all.contains(.snapshotRequested(.homeAssistantOnline)))

        let configs = subscriber.messages(under: "homeassistant/").filter { $0.topic.hasSuffix("/config") }
        var uniqueIDs: Set<String> = []
        for message in configs.prefix(messages.count) {
            let json = try #require(message.json)
            guard case let .object(members) = json else {
                Issue.record("not an object")
                continue
            }
            let levels = message.topic.split(separator: "/").map(String.init)
            #expect(levels.count == 5 && levels[0] == "homeassistant" && levels[2] == "beaconbridge_hall_gw")
            let component = levels[1]
            let objectID = levels[3]
            let entity =
                documented.keys.first { objectID == $0 || objectID.hasSuffix("_" + $0) }
                ?? (objectID.contains("_region_") ? "region_<region>" : "?")
            let expectedKeys = try #require(documented[entity], "no documented keys for \(objectID)")
            #expect(Set(members.map(\.0)) == expectedKeys, "\(message.topic)")
            #expect(members.count == expectedKeys.count, "duplicate keys in \(message.topic)")
            uniqueIDs.insert(json["unique_id"]?.string ?? "")

            // Availability on every entity: the gateway's retained birth / will topic.
            #expect(
                json["availability"]
                    == .array([
                        .object([
                            ("topic", .string("beaconbridge/hall-gw/availability")),
                            ("payload_available", .string("online")), ("payload_not_available", .string("offline")),
                        ])
                    ]))
            #expect(json["origin"]?["name"] == .string("BeaconBridge"))
            #expect(json["qos"] == .int(1))
            let device = try #require(json["device"])
            if entity == "outbox_rows" {
                #expect(component == "sensor")
                #expect(device["identifiers"] == .array([.string("beaconbridge_hall_gw")]))
                #expect(device["name"] == .string("Hall gateway"))
                #expect(json["state_topic"] == .string("beaconbridge/hall-gw/telemetry"))
                #expect(json["unit_of_measurement"] == .string("events") && json["icon"] == .string("mdi:tray-full"))
                #expect(json["entity_category"] == .string("diagnostic"))
                continue
            }
            if ["reports_per_second", "tracked_beacons", "last_report"].contains(entity) {
                // The gateway's health, on its own device, from its telemetry.
                #expect(component == "sensor")
                #expect(device["identifiers"] == .array([.string("beaconbridge_hall_gw")]))
                #expect(json["state_topic"] == .string("beaconbridge/hall-gw/telemetry"))
                #expect(json["entity_category"] == .string("diagnostic"))
                continue
            }
            // One device per beacon, shared by every gateway: no via_device that would flip between them.
            #expect(device["via_device"] == nil)
            #expect(device["manufacturer"] == .string("BeaconBridge"))
            let beaconIndex = try #require(beacons.firstIndex { objectID.hasPrefix(TopicLayout.slug($0.id)) })
            let beacon = beacons[beaconIndex]
            #expect(device["name"] == .string(beacon.name))
            #expect(device["model"] == .string(beaconIndex == 0 ? "iBeacon" : "Eddystone-UID"))
            #expect(device["identifiers"] == .array([.string("beaconbridge_beacon_" + TopicLayout.slug(beacon.id))]))
            // Entity names say which gateway reports them.
            #expect(json["name"]?.string?.hasPrefix("Hall gateway") == true, "\(message.topic)")
            switch entity {
            case "tracker":
                #expect(component == "device_tracker")
                #expect(json["name"] == .string("Hall gateway"))
                #expect(json["state_topic"] == .string(layout.presence(beaconID: beacon.id)))
                #expect(json["json_attributes_topic"] == .string(layout.presence(beaconID: beacon.id)))
                #expect(json["json_attributes_template"]?.string?.contains("value_json.beacon_id") == true)
                #expect(json["json_attributes_template"]?.string?.contains("distance") == false)
                #expect(json["payload_home"] == .string("seen") && json["payload_not_home"] == .string("away"))
                #expect(json["source_type"] == .string("bluetooth_le"))
            case "distance", "rssi":
                #expect(component == "sensor")
                #expect(json["state_topic"] == .string(layout.sighting(beaconID: beacon.id)))
                #expect(json["device_class"] == .string(entity == "distance" ? "distance" : "signal_strength"))
                #expect(json["unit_of_measurement"] == .string(entity == "distance" ? "m" : "dBm"))
                #expect(json["state_class"] == .string("measurement"))
                #expect(json["value_template"] == .string("{{ value_json.\(entity) }}"))
                #expect(json["expire_after"] == .int(65))
                #expect(json["entity_category"] == (entity == "rssi" ? .string("diagnostic") : nil))
            case "presence":
                #expect(component == "binary_sensor")
                #expect(json["name"] == .string("Hall gateway presence"))
                #expect(json["device_class"] == .string("presence"))
                #expect(json["payload_on"] == .string("seen") && json["payload_off"] == .string("away"))
            default:
                #expect(component == "binary_sensor")
                let regionIndex = try #require(
                    regions.firstIndex { objectID.hasSuffix("_region_" + TopicLayout.slug($0.name)) })
                let region = regions[regionIndex]
                #expect(pairs.contains { $0 == (regionIndex, beaconIndex) }, "\(objectID) announced")
                #expect(json["name"] == .string("Hall gateway " + (regionIndex == 0 ? "Kitchen" : "Front door")))
                #expect(json["state_topic"] == .string(layout.region(region.name, beaconID: beacon.id)))
                #expect(json["payload_on"] == .string("inside") && json["payload_off"] == .string("outside"))
                #expect(json["value_template"]?.string?.contains("else 'None'") == true)
                #expect(json["device_class"] == .string("presence"))
            }
        }
        #expect(uniqueIDs.count == messages.count)
    }
}

final class NoticeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var notices: [PublisherNotice] = []
    func append(_ notice: PublisherNotice) { lock.withLock { notices.append(notice) } }
    var all: [PublisherNotice] { lock.withLock { notices } }
}
