import BeaconModel
import Foundation
import TestSupport
import Testing

/// The daemon announces Home Assistant sensors for the readings its named beacons send (retained), and for
/// nothing else: not for beacons the configuration does not name, not for fields a device does not send.
@Suite struct SensorDiscoveryDaemonTests {
    static let kitchen = "govee:A4:C1:38:BF:6F:AB"

    /// The Android capture (real radio bytes) holds four Govee thermometers; one is named.
    @Test func namedGoveeGetsItsReadingSensorsRetained() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(
            """
            topics:
              home_assistant:
                enabled: true
            beacons:
              - id: \(Self.kitchen)
                name: Kitchen thermometer
            """)
        let run = try await BuiltBinary.run(
            ["replay", BuiltBinary.androidCapture, "--config", bed.configPath], timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")

        let configs = try await retainedConfigs(bed)
        let node = "beaconbridge_testgw"
        let object = "govee_a4_c1_38_bf_6f_ab"
        let sensors = configs.keys.filter { $0.contains(object) && !$0.hasSuffix("_tracker/config") }
        #expect(
            Set(sensors.map { String($0.split(separator: "/")[2...].joined(separator: "/")) })
                == Set([
                    "\(node)/\(object)_distance/config", "\(node)/\(object)_rssi/config",
                    "\(node)/\(object)_presence/config",
                    "\(node)/\(object)_temperature_c/config", "\(node)/\(object)_humidity_pct/config",
                    "\(node)/\(object)_battery_pct/config",
                ]), "\(configs.keys.sorted())")
        let temperature = try #require(configs["homeassistant/sensor/\(node)/\(object)_temperature_c/config"])
        #expect(temperature["device_class"] == .string("temperature"))
        #expect(temperature["unit_of_measurement"] == .string("°C"))
        #expect(temperature["state_class"] == .string("measurement"))
        #expect(temperature["state_topic"] == .string("\(bed.topicBase)/sighting/\(Self.kitchen)"))
        #expect(temperature["name"] == .string("testgw temperature"))
        let humidity = try #require(configs["homeassistant/sensor/\(node)/\(object)_humidity_pct/config"])
        #expect(humidity["device_class"] == .string("humidity") && humidity["unit_of_measurement"] == .string("%"))
        let battery = try #require(configs["homeassistant/sensor/\(node)/\(object)_battery_pct/config"])
        #expect(battery["device_class"] == .string("battery"))
        // The three thermometers the configuration does not name get nothing.
        for other in ["a4_c1_38_70_53_99", "a4_c1_38_83_ef_4c", "a4_c1_38_8b_73_f4"] {
            #expect(!configs.keys.contains { $0.contains(other) })
        }
        // No entity for information fields (the model).
        #expect(!configs.keys.contains { $0.hasSuffix("_model/config") })
    }

    /// A simulated BTHome sensor (the registry's frame: packet id, temperature, humidity) from a named address:
    /// sensors for exactly those two readings, none for the packet id (information) nor for any other BTHome
    /// reading (not sent).
    @Test func namedBTHomeSensorGetsOneSensorPerReading() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let address = "C0:FF:EE:00:00:42"
        try bed.writeConfig(
            """
            topics:
              home_assistant:
                enabled: true
            beacons:
              - id: bthome:\(address)
                name: Bathroom
            """)
        let start = 1_700_000_000.0
        let observations = stride(from: 0.0, to: 30, by: 1).map { offset in
            Observation(
                timestamp: start + offset, beaconID: "", format: "bthome", identifiers: [],
                address: BluetoothAddress(string: address)!, rssi: -60, measuredPower: nil)
        }
        let capture = try bed.writeCapture("bthome.btsnoop", observations)
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")

        let configs = try await retainedConfigs(bed)
        let object = "bthome_c0_ff_ee_00_00_42"
        let readings = configs.keys.filter { $0.hasPrefix("homeassistant/sensor/") && $0.contains(object) }
            .map { String($0.split(separator: "/")[3].dropFirst(object.count + 1)) }
        #expect(Set(readings) == ["distance", "rssi", "temperature_c", "humidity_pct"], "\(readings)")
        let humidity = try #require(configs["homeassistant/sensor/beaconbridge_testgw/\(object)_humidity_pct/config"])
        #expect(humidity["device_class"] == .string("humidity"))
        #expect(humidity["value_template"] == .string("{{ value_json.fields.humidity_pct }}"))
        let device = try #require(humidity["device"])
        #expect(device["name"] == .string("Bathroom"))
        #expect(!configs.keys.contains { $0.contains(object + "_packet_id") })
    }

    /// Every retained discovery config on the bed's broker, parsed, by topic (a fresh subscriber gets the
    /// retained messages on subscribe).
    func retainedConfigs(_ bed: DaemonTestBed) async throws -> [String: JSONValue] {
        let subscriber = try TestSubscriber(port: bed.broker.port, patterns: ["homeassistant/#"])
        try await subscriber.start()
        defer { Task { await subscriber.stop() } }
        try await waitUntil("retained discovery configs", timeout: 60) {
            subscriber.messages(under: "homeassistant/").contains { $0.topic.hasSuffix("_temperature_c/config") }
        }
        // Retained messages arrive in one burst after the subscription; a short settle lets the rest follow.
        var count = -1
        while count != subscriber.messages.count {
            count = subscriber.messages.count
            try await Task.sleep(for: .milliseconds(500))
        }
        var out: [String: JSONValue] = [:]
        for message in subscriber.messages(under: "homeassistant/") where message.topic.hasSuffix("/config") {
            out[message.topic] = message.json
        }
        return out
    }
}
