import BeaconConfigReading
import BeaconFormats

/// A beacon the user names (YAML list `beacons`): announced to Home Assistant by discovery and named in events.
public struct KnownBeacon: Sendable, Equatable, Hashable {
    /// The beacon id as events carry it, e.g. `ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2`,
    /// `eddystone-uid:<namespace>:<instance>`, `<layout name>:<identifiers>` or `mac:<address>`.
    public var id: String
    /// Human-readable name (Home Assistant device name); defaults to the id.
    public var name: String

    public init(id: String, name: String? = nil) {
        self.id = id
        self.name = name ?? id
    }

    /// The beacon as Home Assistant discovery announces it.
    public var discovery: HomeAssistantDiscovery.Beacon { HomeAssistantDiscovery.Beacon(id: id, name: name) }

    /// The format part of the id (before the first `:`), nil when there is none.
    public var formatName: String? {
        guard let colon = id.firstIndex(of: ":"), colon != id.startIndex else { return nil }
        return String(id[..<colon])
    }

    /// Validates a whole `beacons` list: ids present, shaped `format:identifiers`, unique.
    public static func validate(_ beacons: [KnownBeacon], path: String = "beacons") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        var seen: [String: Int] = [:]
        for (index, beacon) in beacons.enumerated() {
            let at = "\(path)[\(index)]"
            if beacon.id.isEmpty {
                issues.append(ConfigIssue(path: "\(at).id", message: "must not be empty"))
                continue
            }
            if beacon.formatName == nil || beacon.id.hasSuffix(":") {
                issues.append(
                    ConfigIssue(
                        path: "\(at).id",
                        message: "`\(beacon.id)` is not a beacon id (format:identifiers, "
                            + "e.g. ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2)"))
            }
            if beacon.name.isEmpty { issues.append(ConfigIssue(path: "\(at).name", message: "must not be empty")) }
            if let first = seen[beacon.id] {
                issues.append(ConfigIssue(path: "\(at).id", message: "duplicate beacon id (also \(path)[\(first)])"))
            } else {
                seen[beacon.id] = index
            }
        }
        return issues
    }
}
