import DeviceProtocols
import Testing

@testable import YAMLConfig

/// The `esphome_api` section through the real YAML loader.
@Suite struct ESPHomeAPISectionTests: SectionLoading {
    let hostname = "Pi_Hall.lan"

    @Test func offByDefaultAndValuesReachTheSettings() throws {
        let defaults = try load("gateway: {id: hall}\n").get().esphomeAPI
        #expect(!defaults.enabled)
        #expect(defaults.port == 6053)
        #expect(defaults.nodeName(hostname: "Pi_Hall.lan") == "pi-hall")
        #expect(defaults.allow.contains { $0.contains([192, 168, 1, 2]) })
        #expect(!defaults.allow.contains { $0.contains([8, 8, 8, 8]) })

        let c = try load(
            """
            esphome_api:
              enabled: true
              bind: "::"
              port: 16053
              name: hall-proxy
              mac: "02:AA:BB:CC:DD:EE"
              encryption_key_env: ESPHOME_KEY
              password_file: /etc/beaconbridge/esphome.password
              allow: [192.168.7.0/24, "fd00::/8"]
              client_queue_bytes: 1MiB
              batch_interval_ms: 50
              replay_wait_for_clients: 2
            """
        ).get().esphomeAPI
        #expect(c.enabled && c.bind == "::" && c.port == 16053)
        #expect(c.nodeName(hostname: "x") == "hall-proxy")
        #expect(c.macAddress(nodeName: "hall-proxy").description == "02:AA:BB:CC:DD:EE")
        #expect(c.encryptionKeyEnv == "ESPHOME_KEY" && c.passwordFile == "/etc/beaconbridge/esphome.password")
        #expect(c.allow.map(\.description) == ["192.168.7.0/24", "fd00:0:0:0:0:0:0:0/8"])
        #expect(c.clientQueueBytes == 1 << 20 && c.batchIntervalMilliseconds == 50 && c.replayWaitForClients == 2)
    }

    @Test func derivedMACIsStableAndLocallyAdministered() {
        let settings = ESPHomeAPISettings()
        let mac = settings.macAddress(nodeName: "pi-hall")
        #expect(mac == settings.macAddress(nodeName: "pi-hall"))
        #expect(mac != settings.macAddress(nodeName: "pi-kitchen"))
        #expect((mac.rawValue >> 40) & 0x03 == 0x02)  // locally administered, unicast
    }

    @Test func problemsNameLineAndKey() {
        guard
            case let .failure(errors) = load(
                """
                esphome_api:
                  encryption_key: bWlsbGlvbnM=
                  port: 70000
                  name: Hall_Pi
                  allow: [192.168.1.0/33]
                  encryption_key_file: relative.key
                  password_env: A
                  password_file: /x
                """)
        else {
            Issue.record("expected problems")
            return
        }
        let text = errors.lines.joined(separator: "\n")
        #expect(text.contains("t.yaml:2:19: esphome_api.encryption_key: a secret does not belong"))
        #expect(text.contains("esphome_api.port: must be 1-65535"))
        #expect(text.contains("esphome_api.name: `Hall_Pi` is not a node name"))
        #expect(text.contains("esphome_api.allow: `192.168.1.0/33` is not an address or network"))
        #expect(text.contains("esphome_api.encryption_key_file: must be an absolute path"))
        #expect(text.contains("esphome_api.password_env: set password_file or password_env, not both"))
        #expect(!text.contains("bWlsbGlvbnM="))
    }
}
