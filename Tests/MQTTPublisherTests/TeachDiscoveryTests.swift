import BeaconEvents
import BeaconModel
import BeaconTracking
import Testing

/// Home Assistant's teach buttons (issue 43; docs/teach.md, "From Home Assistant"): per region with a typical
/// device (`taught_like`), "Teach <region> boundary" and "Teach <region> inside" on the gateway's device, whose
/// presses are teach commands every gateway of the site accepts.
@Suite struct TeachDiscoveryTests {
    static let device = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:9"

    static func discovery() -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(
            layout: TopicLayout(settings: TopicSettings(prefix: "home/ble"), gatewayID: "gw-a"),
            gatewayName: "Kitchen", softwareVersion: "1")
    }

    @Test func aRegionWithATypicalDeviceGetsTwoButtonsWhosePressesAreTeachCommands() throws {
        let regions = [
            HomeAssistantDiscovery.Region(name: "front_door", taughtLike: Self.device),
            HomeAssistantDiscovery.Region(name: "desk"),
        ]
        let buttons = Self.discovery().messages(beacons: [], regions: regions).filter {
            $0.topic.hasPrefix("homeassistant/button/")
        }
        #expect(
            buttons.map(\.topic) == [
                "homeassistant/button/beaconbridge_gw_a/teach_front_door_boundary/config",
                "homeassistant/button/beaconbridge_gw_a/teach_front_door_inside/config",
            ])
        #expect(buttons.allSatisfy { $0.retain })
        // The progress: this gateway's teach replies as a sensor.
        let sensor = try #require(
            Self.discovery().messages(beacons: [], regions: regions).first {
                $0.topic == "homeassistant/sensor/beaconbridge_gw_a/teach/config"
            })
        let sensorConfig = try JSONValue(parsing: sensor.payload)
        #expect(sensorConfig["state_topic"] == .string("home/ble/gw-a/reply/regions/teach"))
        #expect(sensorConfig["json_attributes_topic"] == .string("home/ble/gw-a/reply/regions/teach"))
        for (button, spot) in zip(buttons, [TeachSpot.boundary, .inside]) {
            let config = try JSONValue(parsing: button.payload)
            #expect(config["name"] == .string("Teach Front door \(spot.rawValue)"))
            #expect(config["command_topic"] == .string("home/ble/regions/command/teach"))
            guard case let .string(press)? = config["payload_press"] else {
                Issue.record("no payload_press in \(button.payload)")
                continue
            }
            // The press is what the gateways' command reader accepts, for the typical device at that spot.
            let command = TeachCommand.parse(verb: "teach", payload: Array(press.utf8), regions: ["front_door"])
            #expect(
                command
                    == .success(
                        .teach(
                            id: "ha-front_door-\(spot.rawValue)", region: "front_door", device: Self.device,
                            spot: spot, seconds: TeachCommand.defaultSeconds)))
        }
    }

    @Test func withoutATypicalDeviceNoButton() {
        let messages = Self.discovery().messages(beacons: [], regions: [HomeAssistantDiscovery.Region(name: "desk")])
        #expect(!messages.contains { $0.topic.hasPrefix("homeassistant/button/") || $0.topic.contains("/teach/") })
        #expect(!messages.isEmpty)
    }
}
