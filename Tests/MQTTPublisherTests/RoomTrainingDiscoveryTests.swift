import BeaconEvents
import BeaconModel
import BeaconRooms
import Testing

/// Home Assistant's training entities (issue 29; docs/rooms.md, "Training, step by step"): a quality sensor per
/// room always, a "Train <room>" button per room only with `rooms.training.device`, whose press is a train
/// command the gateway accepts, sent to the leader that announced it.
@Suite struct RoomTrainingDiscoveryTests {
    static let topics = RoomTopics(prefix: "home/ble")

    static func discovery(_ gateway: String) -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(
            layout: TopicLayout(settings: TopicSettings(prefix: "home/ble"), gatewayID: gateway),
            gatewayName: gateway, softwareVersion: "1")
    }

    @Test func withoutATrainingDeviceOnlyTheQualitySensors() throws {
        let messages = Self.discovery("gw-a").trainingMessages(
            rooms: ["kitchen", "hall", "kitchen"], leader: "gw-a", topics: Self.topics, gateways: ["gw-a", "gw-b"],
            training: TrainingSettings())
        #expect(
            messages.map(\.topic) == [
                "homeassistant/sensor/beaconbridge_rooms/fingerprint_hall/config",
                "homeassistant/sensor/beaconbridge_rooms/fingerprint_kitchen/config",
            ])
        let sensor = try JSONValue(parsing: messages[1].payload)
        #expect(sensor["state_topic"] == .string("home/ble/rooms/fingerprint/kitchen"))
        #expect(sensor["unique_id"] == .string("beaconbridge_rooms_fingerprint_kitchen"))
        #expect(sensor["availability_mode"] == .string("any"))
        #expect(messages.allSatisfy { $0.retain })
    }

    @Test func buttonsPublishATrainCommandTheLeaderAccepts() throws {
        var training = TrainingSettings()
        training.device = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:9"
        training.seconds = 45
        let messages = Self.discovery("gw-b").trainingMessages(
            rooms: ["kitchen", "hall"], leader: "gw-b", topics: Self.topics, gateways: ["gw-a", "gw-b"],
            training: training)
        let buttons = messages.filter { $0.topic.hasPrefix("homeassistant/button/") }
        #expect(
            buttons.map(\.topic) == [
                "homeassistant/button/beaconbridge_rooms/train_hall/config",
                "homeassistant/button/beaconbridge_rooms/train_kitchen/config",
            ])
        let kitchen = try JSONValue(parsing: buttons[1].payload)
        #expect(kitchen["name"] == .string("Train kitchen"))
        #expect(kitchen["command_topic"] == .string("home/ble/gw-b/command/rooms/train"))
        guard case let .string(press)? = kitchen["payload_press"] else {
            Issue.record("no payload_press in \(buttons[1].payload)")
            return
        }
        let command = RoomCommand.parse(verb: "train", payload: Array(press.utf8), rooms: ["kitchen", "hall"])
        #expect(
            command == .success(.train(id: "ha-kitchen", room: "kitchen", device: training.device ?? "", seconds: 45)))
        // Another leader announces the same entity with its own command topic.
        let other = Self.discovery("gw-a").trainingMessages(
            rooms: ["kitchen", "hall"], leader: "gw-a", topics: Self.topics, gateways: ["gw-a", "gw-b"],
            training: training)
        let moved = try JSONValue(parsing: other.filter { $0.topic == buttons[1].topic }.first?.payload ?? "")
        #expect(moved["unique_id"] == kitchen["unique_id"])
        #expect(moved["command_topic"] == .string("home/ble/gw-a/command/rooms/train"))
    }
}
