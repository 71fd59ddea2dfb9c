import BeaconModel

/// What `beaconbridge devices status` shows (docs/tracking-and-regions.md, "Away that fits the device"): per
/// beacon and gateway, the retained presence state with what the gateway learned of the beacon's timing
/// (`interval_s`, `away_after_s`). Fed the messages a subscriber to `<prefix>/+/presence/+` receives; pure.
public struct DevicesStatus: Sendable {
    public struct Row: Sendable, Equatable {
        public var beaconID: String
        /// The name the beacon advertises (the event's `name`), if any.
        public var name: String?
        public var gatewayID: String
        public var state: String
        public var interval: Double?
        public var awayAfter: Double?
        /// Capture time of the presence event.
        public var time: Timestamp?
    }

    public let prefix: String
    /// Configured names by beacon id (`beacons`, `devices.known`), shown before an advertised name.
    public let names: [String: String]
    public private(set) var rows: [Row] = []
    /// Messages on presence topics that were not a presence event (or were over the row limit).
    public private(set) var malformed = 0

    /// Rows kept at most (a broker full of retained presence from thousands of beacons prints the first).
    public static let maxRows = 4096

    public init(prefix: String, names: [String: String] = [:]) {
        self.prefix = prefix
        self.names = names
    }

    /// The subscription that brings every gateway's retained presence.
    public var filter: String { prefix + "/+/presence/+" }

    public mutating func take(_ message: InboundMessage) {
        let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false)
        let prefixLevels = prefix.split(separator: "/", omittingEmptySubsequences: false).count
        guard levels.count == prefixLevels + 3, levels[prefixLevels + 1] == "presence" else { return }
        // An empty retained message clears a topic; nothing to show.
        guard !message.payload.isEmpty else { return }
        guard rows.count < Self.maxRows,
            let text = String(validating: message.payload.prefix(65_536), as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 8),
            case let .string(state)? = json["state"], ["seen", "stale", "away"].contains(state)
        else {
            malformed += 1
            return
        }
        let beaconID: String
        if case let .string(id)? = json["beacon_id"] {
            beaconID = id
        } else {
            beaconID = String(levels[prefixLevels + 2])
        }
        rows.append(
            Row(
                beaconID: beaconID, name: json["name"].flatMap { if case let .string(name) = $0 { name } else { nil } },
                gatewayID: String(levels[prefixLevels]), state: state,
                interval: json["interval_s"]?.number, awayAfter: json["away_after_s"]?.number,
                time: json["time"]?.number))
    }

    /// The table as printed: a line per beacon and gateway under a header, sorted by beacon then gateway.
    public func table(now: Timestamp) -> String {
        var lines: [[String]] = [["beacon", "name", "gateway", "state", "interval_s", "away_after_s", "last_s_ago"]]
        func figure(_ value: Double?) -> String { value.map { String(($0 * 100).rounded() / 100) } ?? "-" }
        for row in rows.sorted(by: { ($0.beaconID, $0.gatewayID) < ($1.beaconID, $1.gatewayID) }) {
            let age = row.time.flatMap { now.isFinite && $0.isFinite ? String(Int((now - $0).rounded())) : nil }
            lines.append([
                row.beaconID, names[row.beaconID] ?? row.name ?? "-", row.gatewayID, row.state, figure(row.interval),
                figure(row.awayAfter), age ?? "-",
            ])
        }
        var text = TextTable.render(lines)
        if rows.isEmpty {
            text += "\nno retained presence under \(filter) (no beacon heard yet, or presence not retained)"
        }
        if malformed > 0 { text += "\n\(malformed) message(s) on presence topics were not presence events" }
        return text
    }
}

extension JSONValue {
    /// The value as a Double when it is a JSON number.
    fileprivate var number: Double? {
        switch self {
        case let .int(value): Double(value)
        case let .double(value): value
        default: nil
        }
    }
}
