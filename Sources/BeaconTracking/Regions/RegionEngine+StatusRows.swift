import BeaconModel

/// One tracked beacon as the status page lists it (docs/status-page.md).
public struct TrackedBeaconRow: Sendable, Equatable {
    public var beaconID: String
    public var format: String
    public var name: String?
    /// The last report's RSSI and the filtered one (dBm), the distance estimate (m).
    public var rssi: Int?
    public var smoothedRSSI: Double?
    public var distance: Double?
    public var presence: PresenceState
    /// Seconds since the last report, at the time asked for.
    public var age: Double
    /// Its state in each configured region its rule matched so far (`inside`, `outside`, `unknown`), by name.
    public var regions: [Region] = []

    public struct Region: Sendable, Equatable {
        public var name: String
        public var state: RegionState
    }
}

extension RegionEngine {
    /// The `limit` most recently seen beacons whose identity is known, newest first: one pass over at most `limit`
    /// of the tracker's slots after its list of live ones.
    public func statusRows(limit: Int, at time: Timestamp) -> [TrackedBeaconRow] {
        var rows: [TrackedBeaconRow] = []
        rows.reserveCapacity(min(limit, tracker.count))
        for slot in tracker.liveSlots where rows.count < limit && tracker.slots[slot].identityKnown {
            let beacon = tracker.slots[slot]
            rows.append(
                TrackedBeaconRow(
                    beaconID: beacon.beaconID, format: beacon.format, name: beacon.name, rssi: beacon.rssi,
                    smoothedRSSI: beacon.smoothedRSSI, distance: beacon.distance,
                    presence: beacon.present ? (beacon.stale ? .stale : .seen) : .away,
                    age: max(0, time - beacon.lastSeen),
                    regions: beacon.memberships.map {
                        TrackedBeaconRow.Region(name: evaluator.names[Int($0.region)], state: $0.state)
                    }))
        }
        return rows
    }
}
