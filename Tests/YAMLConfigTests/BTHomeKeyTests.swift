import BeaconFormats
import BeaconModel
import Foundation
import Testing

@testable import YAMLConfig

/// `formats.bthome_keys`: keys from files and the environment, problems at their line, never the key itself.
@Suite struct BTHomeKeyTests: SectionLoading {
    static let key = "231d39c1d7cc1ab1aee224cd096db932"

    @Test func keyFromAFileDecryptsTheDevice() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bthome-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("door.key").path
        try (Self.key + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let yaml = "formats:\n  bthome_keys:\n    - address: \"54:48:E6:8F:80:A5\"\n      key_file: \(file)\n"
        guard case let .success(configuration) = load(yaml) else {
            Issue.record("\(load(yaml))")
            return
        }
        #expect(configuration.formats.bthomeKeys.first?.key?.bytes.count == 16)
        // The key never shows in descriptions of the configuration.
        #expect(!"\(configuration)".contains(Self.key) && !String(reflecting: configuration).contains("231d39c1"))
        let decoder = try BeaconDecoder(settings: configuration.formats)
        let data: [UInt8] = [
            0x12, 0x16, 0xD2, 0xFC, 0x41, 0xA4, 0x72, 0x66, 0xC9, 0x5F, 0x73, 0x00, 0x11, 0x22, 0x33, 0x78, 0x23, 0x72,
            0x14,
        ]
        let report = AdvertisingReport(
            timestamp: 1, eventType: 0x10, isExtended: false,
            address: BluetoothAddress(string: "54:48:E6:8F:80:A5")!, addressType: .publicDevice,
            rssi: -60, txPower: nil, data: data)
        #expect(decoder.decode(report).beacons.first?.fields["temperature_c"] == .double(25.06))
    }

    @Test func everyProblemAtItsPlaceWithoutTheSecret() throws {
        let yaml = """
            formats:
              bthome_keys:
                - address: "not-a-mac"
                  key_env: BEACONBRIDGE_TEST_UNSET_VARIABLE
                - address: "54:48:E6:8F:80:A5"
                  key: \(Self.key)
                - address: "54:48:E6:8F:80:A5"
                  key_file: /k
                  key_env: X
                - address: "54:48:E6:8F:80:A6"
                  key_file: relative/path
            """
        guard case let .failure(errors) = load(yaml) else {
            Issue.record("accepted")
            return
        }
        let text = errors.lines.joined(separator: "\n")
        #expect(text.contains("formats.bthome_keys[0].address: `not-a-mac` is not a MAC address"))
        #expect(
            text.contains(
                "formats.bthome_keys[0].key_env: environment variable BEACONBRIDGE_TEST_UNSET_VARIABLE is not set"))
        #expect(text.contains("formats.bthome_keys[1].key: a bind key does not belong in the configuration file"))
        #expect(text.contains("formats.bthome_keys[2].key_env: set key_file or key_env, not both"))
        #expect(text.contains("formats.bthome_keys[3].key_file: `relative/path` must be an absolute path"))
        #expect(text.contains("formats.bthome_keys[2].address: a second key for 54:48:E6:8F:80:A5"))
        #expect(!text.contains(Self.key))
    }

    @Test func keyParsing() {
        #expect(BTHomeKey.parse(Self.key)?.count == 16)
        #expect(BTHomeKey.parse(" 0x23:1d:39:c1:d7:cc:1a:b1:ae:e2:24:cd:09:6d:b9:32\n")?.first == 0x23)
        #expect(BTHomeKey.parse("231d39") == nil)
        #expect(BTHomeKey.parse(String(repeating: "zz", count: 16)) == nil)
    }
}
