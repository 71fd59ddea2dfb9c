import BeaconConfigReading
import BeaconModel

extension ESPHomeAPISettings {
    /// The `esphome_api:` section. Ranges are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.bool("enabled", default: enabled)
        bind = r.string("bind", default: bind)
        port = r.value("port", default: port)
        name = r.string("name")
        friendlyName = r.string("friendly_name")
        mac = r.value("mac", expecting: "a MAC address (AA:BB:CC:DD:EE:FF)") { BluetoothAddress(string: $0) }
        encryptionKeyFile = r.string("encryption_key_file")
        encryptionKeyEnv = r.string("encryption_key_env")
        passwordFile = r.string("password_file")
        passwordEnv = r.string("password_env")
        for secret in ["encryption_key", "password"] where r.entry(secret) != nil {
            r.issue(
                "a secret does not belong in the configuration file: put it in a file (`\(secret)_file`) or an "
                    + "environment variable (`\(secret)_env`)", key: secret)
        }
        if r.has("allow") {
            let texts: [String] = r.list("allow", of: String.self)
            var ranges: [NetworkAddressRange] = []
            for text in texts {
                if let range = NetworkAddressRange(text) {
                    ranges.append(range)
                } else {
                    r.issue(
                        "`\(text)` is not an address or network in CIDR notation (192.168.1.0/24, fd00::/8)",
                        key: "allow")
                }
            }
            allow = ranges
        }
        maxClients = r.value("max_clients", default: maxClients)
        clientQueueBytes = r.value("client_queue_bytes", as: ConfigByteSize.self)?.bytes ?? clientQueueBytes
        batchIntervalMilliseconds = r.value("batch_interval_ms", default: batchIntervalMilliseconds)
        mdns = r.bool("mdns", default: mdns)
        activeConnections = r.bool("active_connections", default: activeConnections)
        replayWaitForClients = r.value("replay_wait_for_clients", default: replayWaitForClients)
    }
}
