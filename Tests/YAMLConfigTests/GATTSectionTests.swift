import BeaconModel
import Testing

@testable import YAMLConfig

/// The `gatt` section through the real YAML loader: off by default, values reach the settings, every problem is
/// reported with its file, line and key path.
@Suite struct GATTSectionTests: SectionLoading {
    let hostname = "hall"

    @Test func offByDefaultAndValuesReachTheSettings() throws {
        let defaults = try load("gateway: {id: hall}\n").get().gatt
        #expect(!defaults.enabled && defaults.slots == 3 && defaults.connectTimeout == 20)
        #expect(defaults.allowedDevices.isEmpty && defaults.devices.isEmpty)
        let g = try load(
            """
            gatt:
              enabled: true
              slots: 2
              connect_timeout_s: 5
              request_timeout_s: 10
              allowed_devices: [AA:BB:CC:DD:EE:01, "aa:bb:cc:dd:ee:02"]
              devices:
                - address: AA:BB:CC:DD:EE:01
                  random: true
                  name: tag-1
                  interval_s: 2h
                  read: [battery, firmware]
                - address: AA:BB:CC:DD:EE:02
                  name: lock
            """
        ).get().gatt
        #expect(g.enabled && g.slots == 2 && g.connectTimeout == 5 && g.requestTimeout == 10)
        #expect(g.allowedDevices.map(\.description) == ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02"])
        #expect(g.devices.count == 2 && g.devices[0].random && g.devices[0].interval == 7200)
        #expect(g.devices[0].read == [.battery, .firmware] && g.devices[1].read == [.firmware, .hardware, .battery])
        #expect(g.allows(g.devices[1].address) && !g.allows(BluetoothAddress(rawValue: 1)))
    }

    @Test func everyProblemIsReportedWithItsKey() {
        let found = problems(
            """
            gatt:
              enabled: maybe
              slots: 4
              connect_timeout_s: 0
              request_timeout_s: 31
              allowed_devices: [AA:BB:CC:DD:EE:01, nonsense]
              devices:
                - address: AA:BB:CC:DD:EE:0G
                  name: tag 1
                  interval_s: 10
                  read: [battery, colour]
                - name: tag2
                - address: AA:BB:CC:DD:EE:05
                  name: tag2
              colour: blue
            """)
        for expected in [
            "gatt.enabled", "gatt.slots", "gatt.connect_timeout_s", "gatt.request_timeout_s",
            "gatt.allowed_devices[1]", "gatt.devices[0].address", "gatt.devices[0].name", "gatt.devices[0].interval_s",
            "gatt.devices[0].read", "gatt.devices[1].address", "gatt.devices[2].name", "gatt.devices[2].address",
            "gatt.colour",
        ] {
            #expect(found.contains { $0.contains(expected) }, "\(expected) missing in \(found)")
        }
        // Each names the file and line: `t.yaml:3:10: gatt.slots: ...`.
        #expect(found.allSatisfy { $0.hasPrefix("t.yaml:") && $0.dropFirst(7).first?.isNumber == true }, "\(found)")
    }
}
