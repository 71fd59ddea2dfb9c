import BeaconModel
import Foundation
import Testing

@testable import YAMLConfig

/// The `devices` section through the real loader: keys inline, from a file and from the environment, in every
/// accepted spelling; malformed keys reported at their line and column without being repeated.
@Suite struct DeviceSectionTests: SectionLoading {
    static let sampleKey = "ec0234a357c8ad05341010a60a397d9b"

    @Test func inlineKeysInEverySpellingReachTheResolver() throws {
        let c = try load(
            """
            devices:
              publish_unresolved: yes
              address_lifetime_s: 20m
              known:
                - {name: phone, irk: \(Self.sampleKey), measured_power: -62, away_timeout_s: 5m}
                - {name: watch, irk: "irk:9b7d390aa610103405adc857a33402ed"}
                - {name: tag, irk: "7AI0o1fIrQU0EBCmCjl9mA=="}
            """
        ).get()
        #expect(c.devices.publishUnresolved)
        #expect(c.devices.addressLifetime == 1200)
        #expect(c.devices.known.map(\.name) == ["phone", "watch", "tag"])
        #expect(c.devices.known.allSatisfy { $0.key != nil })
        #expect(c.devices.known[0].measuredPower == -62)
        #expect(c.tracking.awayTimeoutOverrides == ["irk:phone": 300])
        #expect(c.namedBeacons.map(\.id) == ["irk:phone", "irk:watch", "irk:tag"])
        var resolver = c.devices.resolver()
        let address = BluetoothAddress(string: "70:81:94:0D:FB:AA")!
        #expect(resolver.resolve(address, type: .randomDevice, at: 0) == .resolved(device: 0, order: .asWritten))
    }

    @Test func malformedKeysAreReportedAtTheirLineAndColumnWithoutTheKey() {
        let lines = problems(
            """
            devices:
              known:
                - name: phone
                  irk: ec0234a357c8ad05341010a60a397d9
                - name: watch
                  irk: 7AI0o1fIrQU0EBCmCjl9mw=
            """)
        #expect(lines.count == 2)
        #expect(
            lines.first?.hasPrefix("t.yaml:4:12: devices.known[0].irk: not an identity resolving key: 31 hex digits")
                == true)
        #expect(lines.last?.hasPrefix("t.yaml:6:12: devices.known[1].irk: not an identity resolving key") == true)
        #expect(!lines.joined().contains("ec0234a357"))
        #expect(!lines.joined().contains("7AI0o1fIrQU"))
    }

    @Test func oneKeySourcePerDeviceAndUniqueNamesAndKeys() {
        let lines = problems(
            """
            devices:
              known:
                - {name: phone, irk: \(Self.sampleKey), irk_env: PHONE_KEY}
                - {name: phone, irk: "7AI0o1fIrQU0EBCmCjl9mw=="}
                - {name: "bad name"}
            beacons: [{id: "irk:nobody"}]
            """)
        #expect(lines.contains { $0.contains("devices.known[0].irk_env: give the key once") })
        #expect(lines.contains { $0.contains("devices.known[1].name: duplicate device name") })
        #expect(lines.contains { $0.contains("devices.known[1].irk: the same key as devices.known[0]") })
        #expect(lines.contains { $0.contains("devices.known[2].name: `bad name` is not a valid device name") })
        #expect(lines.contains { $0.contains("devices.known[2]: a device needs its identity resolving key") })
        #expect(lines.contains { $0.contains("beacons[0].id: `irk:nobody` names no device of devices.known") })
    }

    @Test func keysFromFilesAndTheEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-irk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("phone.irk").path
        let bad = directory.appendingPathComponent("watch.irk").path
        try "  \(Self.sampleKey)\n".write(toFile: good, atomically: true, encoding: .utf8)
        try "not-a-key-0123\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let variable = "BB_TEST_IRK_\(UInt32.random(in: 0...UInt32.max))"
        setenv(variable, "7AI0o1fIrQU0EBCmCjl9mw==", 1)
        defer { unsetenv(variable) }

        let c = try load(
            """
            devices:
              known:
                - {name: phone, irk_file: \(good)}
                - {name: tag, irk_env: \(variable)}
            """
        ).get()
        #expect(
            c.devices.known.map { $0.key?.fingerprint } == [
                c.devices.known[0].key?.fingerprint, c.devices.known[0].key?.fingerprint,
            ])
        #expect(c.devices.known[0].key != nil)

        let lines = problems(
            """
            devices:
              known:
                - {name: watch, irk_file: \(bad)}
                - {name: tag, irk_env: \(variable)_UNSET}
                - {name: gone, irk_file: \(directory.path)/missing.irk}
                - {name: relative, irk_file: keys/phone.irk}
                - {name: service, irk_file: /run/credentials/beaconbridge.service/phone.irk}
            """)
        #expect(lines.count == 4)
        #expect(
            lines.contains {
                $0.hasPrefix("t.yaml:3:31: devices.known[0].irk_file: `\(bad)`: not an identity resolving key")
            })
        #expect(
            lines.contains {
                $0.contains("devices.known[1].irk_env: environment variable \(variable)_UNSET is not set")
            })
        #expect(
            lines.contains { $0.contains("devices.known[2].irk_file: `\(directory.path)/missing.irk` does not exist") })
        #expect(lines.contains { $0.contains("devices.known[3].irk_file: `keys/phone.irk` must be an absolute path") })
        #expect(!lines.joined().contains("not-a-key-0123"))
    }
}
