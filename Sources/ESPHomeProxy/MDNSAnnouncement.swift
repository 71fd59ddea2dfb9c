import DeviceProtocols

/// The `_esphomelib._tcp` announcement of the proxy: the TXT records and the equivalent static Avahi service
/// file (`beaconbridge esphome-mdns`, docs/home-assistant.md). `AvahiPublisher` announces the same records
/// through a supervised `avahi-publish-service` child. Home Assistant's ESPHome integration discovers the node
/// by it: it requires `mac` (lower-case hex without colons; the device's unique id), shows `friendly_name`,
/// asks for a key when `api_encryption` is present, and takes the device name from the host name of the
/// record. The other records are what ESPHome's own `mdns` component publishes.
public enum MDNSAnnouncement {
    /// The TXT records Home Assistant reads, `key=value`.
    public static func txtRecords(identity: ESPHomeDeviceIdentity, encrypted: Bool) -> [String] {
        var records = [
            "mac=" + identity.macAddress.lowercased().filter { $0 != ":" },
            "friendly_name=" + identity.friendlyName,
            "version=" + identity.version,
            "platform=Linux",
            "board=BeaconBridge",
            "network=ethernet",
            "project_name=" + identity.projectName,
            "project_version=" + identity.version,
        ]
        if encrypted { records.append("api_encryption=" + NoiseHandshake.protocolName) }
        return records
    }

    public static let serviceType = "_esphomelib._tcp"

    /// An Avahi static service file (avahi.service(5), for `/etc/avahi/services/`) announcing the same service
    /// as `start`: instance `name`, `port`, the TXT records. Text is XML-escaped.
    public static func serviceFile(name: String, port: Int, txt: [String]) -> String {
        var lines = [
            "<?xml version=\"1.0\" standalone='no'?>",
            "<!DOCTYPE service-group SYSTEM \"avahi-service.dtd\">",
            "<!-- The ESPHome Bluetooth proxy of BeaconBridge (esphome_api), written by `beaconbridge esphome-mdns`. -->",
            "<service-group>",
            "  <name>\(xmlEscaped(name))</name>",
            "  <service>",
            "    <type>\(serviceType)</type>",
            "    <port>\(port)</port>",
        ]
        lines += txt.map { "    <txt-record>\(xmlEscaped($0))</txt-record>" }
        lines += ["  </service>", "</service-group>"]
        return lines.joined(separator: "\n") + "\n"
    }

    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            // Control characters are not allowed in XML 1.0 text.
            case let c where c.asciiValue.map({ $0 < 0x20 || $0 == 0x7F }) ?? false: out += " "
            default: out.append(character)
            }
        }
        return out
    }
}
