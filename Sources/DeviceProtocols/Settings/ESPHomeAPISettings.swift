import BeaconConfigReading
import BeaconModel

/// The `esphome_api` section: an ESPHome-compatible Bluetooth proxy server (native API) so Home Assistant's
/// own Bluetooth integrations receive every advertisement this gateway hears. Off by default. Secrets (the
/// encryption key, the password) come from files or environment variables, never from this file. Every key is
/// documented in docs/configuration.md and docs/home-assistant.md ("ESPHome Bluetooth proxy").
public struct ESPHomeAPISettings: Sendable, Equatable {
    /// `esphome_api.enabled`
    public var enabled = false
    /// `esphome_api.bind`: address to listen on (`0.0.0.0` every IPv4 interface, `::` IPv6 and IPv4).
    public var bind = "0.0.0.0"
    /// `esphome_api.port`
    public var port = 6053
    /// `esphome_api.name`: the node name Home Assistant checks (lower case, digits, `-`); default this
    /// machine's host name in that form, which is what Home Assistant expects after mDNS discovery.
    public var name: String?
    /// `esphome_api.friendly_name`: default `gateway.name`, else the name.
    public var friendlyName: String?
    /// `esphome_api.mac`: the MAC Home Assistant keys the device by; default a locally administered address
    /// derived from the name (stable across restarts).
    public var mac: BluetoothAddress?
    /// `esphome_api.encryption_key_file` / `encryption_key_env`: the 32-byte key in base64, as ESPHome's
    /// `api: encryption: key:`. Without either the plaintext framing is used.
    public var encryptionKeyFile: String?
    public var encryptionKeyEnv: String?
    /// `esphome_api.password_file` / `password_env`: the legacy API password (optional).
    public var passwordFile: String?
    public var passwordEnv: String?
    /// `esphome_api.allow`: client networks (CIDR); connections from elsewhere are refused.
    public var allow: [NetworkAddressRange] = ESPHomeAPISettings.privateNetworks
    /// `esphome_api.max_clients`
    public var maxClients = 4
    /// `esphome_api.client_queue_bytes`: bytes waiting for a slow client before its advertisements are dropped.
    public var clientQueueBytes = 256 * 1024
    /// `esphome_api.batch_interval_ms`: advertisements are sent in batches this often.
    public var batchIntervalMilliseconds = 100
    /// `esphome_api.mdns`: announce `_esphomelib._tcp` through `avahi-publish-service` when it is installed.
    public var mdns = true
    /// `esphome_api.active_connections`: with `gatt.enabled`, clients (Home Assistant) may connect to devices
    /// through the proxy, taking slots of `gatt.slots` (shared with the MQTT GATT commands). Without `gatt` the
    /// proxy stays passive whatever this says.
    public var activeConnections = true
    /// `esphome_api.replay_wait_for_clients`: replay only: wait (at most 60 s) until this many clients have
    /// subscribed before the capture starts, so they receive all of it.
    public var replayWaitForClients = 0

    public init() {}

    /// Loopback, RFC 1918, link-local and unique local IPv6 networks.
    public static let privateNetworks: [NetworkAddressRange] = [
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "::1/128", "fc00::/7",
        "fe80::/10",
    ].compactMap(NetworkAddressRange.init)

    /// The node name: `name`, else the host name's first label, lower-cased, other characters as `-`.
    public func nodeName(hostname: String) -> String {
        if let name { return name }
        let label = hostname.split(separator: ".").first.map(String.init) ?? ""
        let mapped = String(label.lowercased().map { ($0.isASCII && ($0.isLetter || $0.isNumber)) ? $0 : "-" })
        let trimmed = String(mapped.drop(while: { $0 == "-" }).prefix(63))
        return trimmed.isEmpty ? "beaconbridge" : trimmed
    }

    /// `mac`, else a locally administered unicast address from an FNV-1a hash of the node name.
    public func macAddress(nodeName: String) -> BluetoothAddress {
        if let mac { return mac }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in nodeName.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let value = (hash & 0x00FF_FFFF_FFFF) | 0x0200_0000_0000  // locally administered, unicast
        return BluetoothAddress(rawValue: value & ~0x0100_0000_0000)
    }

    public static func isValidNodeName(_ name: String) -> Bool {
        (1...63).contains(name.count)
            && name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }
            && name.first != "-" && name.last != "-"
    }

    public func validate(path: String = "esphome_api") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if !(1...65_535).contains(port) { issues.append(ConfigIssue(path: "\(path).port", message: "must be 1-65535")) }
        if NetworkAddressRange.parseAddress(bind) == nil {
            issues.append(ConfigIssue(path: "\(path).bind", message: "`\(bind)` is not an IPv4 or IPv6 address"))
        }
        if let name, !ESPHomeAPISettings.isValidNodeName(name) {
            issues.append(
                ConfigIssue(
                    path: "\(path).name",
                    message: "`\(name)` is not a node name (1-63 lower-case "
                        + "letters, digits or `-`, as ESPHome's)"))
        }
        if encryptionKeyFile != nil, encryptionKeyEnv != nil {
            issues.append(
                ConfigIssue(
                    path: "\(path).encryption_key_env",
                    message: "set encryption_key_file or encryption_key_env, not both"))
        }
        if passwordFile != nil, passwordEnv != nil {
            issues.append(
                ConfigIssue(path: "\(path).password_env", message: "set password_file or password_env, not both"))
        }
        for (key, file) in [("encryption_key_file", encryptionKeyFile), ("password_file", passwordFile)] {
            if let file, !file.hasPrefix("/") {
                issues.append(ConfigIssue(path: "\(path).\(key)", message: "must be an absolute path"))
            }
        }
        if !(1...64).contains(maxClients) {
            issues.append(ConfigIssue(path: "\(path).max_clients", message: "must be between 1 and 64"))
        }
        if !(4096...(64 * 1024 * 1024)).contains(clientQueueBytes) {
            issues.append(ConfigIssue(path: "\(path).client_queue_bytes", message: "must be between 4 KiB and 64 MiB"))
        }
        if !(0...16).contains(replayWaitForClients) {
            issues.append(ConfigIssue(path: "\(path).replay_wait_for_clients", message: "must be between 0 and 16"))
        }
        if !(10...5000).contains(batchIntervalMilliseconds) {
            issues.append(ConfigIssue(path: "\(path).batch_interval_ms", message: "must be between 10 and 5000"))
        }
        return issues
    }
}
