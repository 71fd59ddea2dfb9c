import BeaconCore

#if canImport(Glibc)
import Glibc
#endif

/// Announces the proxy as `_esphomelib._tcp` through Avahi (Raspberry Pi OS and Debian run avahi-daemon):
/// a child `avahi-publish-service` process for as long as the server runs. Home Assistant's ESPHome
/// integration discovers the node by it: it requires `mac` (lower-case hex without colons; the device's unique
/// id), shows `friendly_name`, asks for a key when `api_encryption` is present, and takes the device name from
/// the host name of the record. The other records are what ESPHome's own `mdns` component publishes. Without the
/// tool (package avahi-utils) nothing is announced; `serviceFile` is the equivalent static Avahi service file
/// (`beaconbridge esphome-mdns`, docs/home-assistant.md).
public final class MDNSAnnouncement: @unchecked Sendable {
    /// The child's pid; touched by the starting thread and `stop` only.
    private var pid: pid_t = 0

    public static let tool = "/usr/bin/avahi-publish-service"

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

    public init() {}

    /// Starts the announcement; returns why not when it cannot (tool missing, spawn failed).
    public func start(name: String, port: Int, txt: [String]) -> String? {
        guard access(Self.tool, X_OK) == 0 else { return "\(Self.tool) is not installed (package avahi-utils)" }
        let arguments = [Self.tool, name, Self.serviceType, String(port)] + txt
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var child: pid_t = 0
        let result = posix_spawn(&child, Self.tool, &actions, nil, &argv, environ)
        guard result == 0 else { return "posix_spawn \(Self.tool): \(String(cString: strerror(result)))" }
        pid = child
        return nil
    }

    /// Ends the announcement (SIGTERM to the child, then reaps it without blocking for long).
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(pid, &status, WNOHANG) != 0 { break }
            usleep(10_000)
        }
        pid = 0
    }
}
