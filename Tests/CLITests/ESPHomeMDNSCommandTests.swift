import DeviceProtocols
import Foundation
import TestSupport
import Testing

/// `beaconbridge esphome-mdns`: the Avahi service file for the configured ESPHome proxy, read back by an
/// independent XML parser (Python's xml.etree): service type, the configured port, the node name, and the TXT
/// records Home Assistant's ESPHome discovery reads (`mac` as lower-case hex of the MAC the daemon answers with,
/// `friendly_name` however it is spelled, `api_encryption` only with a key); never a secret.
@Suite struct ESPHomeMDNSCommandTests {
    static let key = Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString()

    struct Parsed: Decodable {
        var root: String
        var name: String
        var type: String
        var port: String
        var txt: [String]
    }

    /// The file as Python's XML parser reads it.
    func parse(_ xml: String, in directory: String) async throws -> Parsed {
        let file = directory + "/service.xml"
        let out = directory + "/parsed.json"
        let err = directory + "/parse.err"
        try xml.write(toFile: file, atomically: true, encoding: .utf8)
        let script = """
            import json, sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            service = root.find("service")
            print(json.dumps({"root": root.tag, "name": root.findtext("name"), "type": service.findtext("type"),
                              "port": service.findtext("port"), "txt": [t.text for t in service.findall("txt-record")]}))
            """
        let python = try ChildProcess("/usr/bin/python3", ["-c", script, file], outputFiles: (out, err))
        #expect(await python.exited(within: 60))
        let text = try String(contentsOfFile: out, encoding: .utf8)
        try #require(!text.isEmpty, "python: \((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
        return try JSONDecoder().decode(Parsed.self, from: Data(text.utf8))
    }

    func write(_ yaml: String, in directory: String) throws -> String {
        let path = directory + "/beaconbridge.yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func encryptedProxyFileMatchesTheConfiguration() async throws {
        let directory = try TestDirectory.make(prefix: "bb-esphome-mdns")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try (Self.key + "\n").write(toFile: directory + "/esphome.key", atomically: true, encoding: .utf8)
        let config = try write(
            """
            gateway: {id: hall, name: "Hall & <Kitchen> \\"Pi\\""}
            outbox: {path: \(directory)/outbox.sqlite}
            esphome_api:
              enabled: true
              port: 16053
              name: hall-pi
              encryption_key_file: \(directory)/esphome.key
            """, in: directory)
        let result = try await BuiltBinary.run(["esphome-mdns", "--config", config], cleanEnvironment: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains(Self.key) && !result.stderr.contains(Self.key))
        let parsed = try await parse(result.stdout, in: directory)
        #expect(parsed.root == "service-group")
        #expect(parsed.name == "hall-pi")
        #expect(parsed.type == "_esphomelib._tcp")
        #expect(parsed.port == "16053")
        var settings = ESPHomeAPISettings()
        settings.name = "hall-pi"
        let mac = settings.macAddress(nodeName: "hall-pi").description.lowercased().filter { $0 != ":" }
        #expect(parsed.txt.contains("mac=\(mac)") && mac.count == 12)
        #expect(parsed.txt.contains("friendly_name=Hall & <Kitchen> \"Pi\""))
        #expect(parsed.txt.contains("api_encryption=Noise_NNpsk0_25519_ChaChaPoly_SHA256"))
        #expect(parsed.txt.contains("version=0.1.0") && parsed.txt.contains("platform=Linux"))
        #expect(Set(parsed.txt.map { String($0.prefix { $0 != "=" }) }).count == parsed.txt.count)  // each key once
    }

    @Test func plaintextProxyHasNoEncryptionRecordAndTheDefaultPort() async throws {
        let directory = try TestDirectory.make(prefix: "bb-esphome-mdns")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try write(
            """
            gateway: {id: hall}
            outbox: {path: \(directory)/outbox.sqlite}
            esphome_api: {enabled: true, name: hall-pi, mac: "02:AA:BB:CC:DD:EE"}
            """, in: directory)
        let result = try await BuiltBinary.run(["esphome-mdns", "--config", config], cleanEnvironment: true)
        #expect(result.status == 0, "\(result.stderr)")
        let parsed = try await parse(result.stdout, in: directory)
        #expect(parsed.port == "6053")
        #expect(parsed.txt.contains("mac=02aabbccddee"))
        #expect(parsed.txt.contains("friendly_name=hall"))
        #expect(!parsed.txt.contains { $0.hasPrefix("api_encryption") })
    }

    @Test func disabledProxyOrBrokenKeyIsAConfigurationError() async throws {
        let directory = try TestDirectory.make(prefix: "bb-esphome-mdns")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let off = try write("gateway: {id: hall}\nesphome_api: {enabled: false}\n", in: directory)
        let disabled = try await BuiltBinary.run(["esphome-mdns", "--config", off], cleanEnvironment: true)
        #expect(disabled.status == 78 && disabled.stdout.isEmpty)
        #expect(disabled.stderr.contains("esphome_api.enabled is not true"))
        try "bm90IGEga2V5\n".write(toFile: directory + "/bad.key", atomically: true, encoding: .utf8)
        let broken = try write(
            "gateway: {id: hall}\nesphome_api:\n  enabled: true\n  encryption_key_file: \(directory)/bad.key\n",
            in: directory)
        let refused = try await BuiltBinary.run(["esphome-mdns", "--config", broken], cleanEnvironment: true)
        #expect(refused.status == 78 && refused.stdout.isEmpty)
        #expect(
            refused.stderr.contains(
                "beaconbridge.yaml:4:24: esphome_api.encryption_key_file: `\(directory)/bad.key` does not hold a 32-byte key in base64"
            ))
        #expect(!refused.stderr.contains("bm90IGEga2V5"))
    }
}
