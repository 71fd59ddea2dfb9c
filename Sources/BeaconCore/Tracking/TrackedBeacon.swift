/// Everything the tracker keeps about one beacon. Bounded: a fixed-size filter state (or a fixed-capacity
/// sample ring), one membership per matching region, the last value of each data field.
struct TrackedBeacon: Sendable {
    var beaconID: String
    var format: String
    var identifiers: [String]
    var address: BluetoothAddress
    var name: String?
    /// False for an entry restored from persisted region state and not sighted since.
    var identityKnown: Bool
    var rssi: Int?
    var smoothedRSSI: Double?
    var distance: Double?
    var measuredPower: Int?
    var fields: [String: FieldValue] = [:]
    var lastSeen: Timestamp
    /// Silence (for `away`) counts from here: the last report, or the restore time for restored entries.
    var quietSince: Timestamp
    var present: Bool
    var filter: RSSIFilter
    var rate = ReportRateMeter()
    var lastPublished: Timestamp?
    var lastPublishedDistance: Double?
    var memberships: [RegionMembership] = []
    /// Filters of regions that override the gateway's (see `RegionMembership.filterSlot`); usually empty.
    var regionFilters: [RSSIFilter] = []
    /// Least-recently-seen list links (slot indices, -1 for none).
    var newer: Int32 = -1
    var older: Int32 = -1

    init(beaconID: String, filter: RSSIFilter, now: Timestamp) {
        self.beaconID = beaconID
        format = ""
        identifiers = []
        address = BluetoothAddress(rawValue: 0)
        identityKnown = false
        lastSeen = now
        quietSince = now
        present = false
        self.filter = filter
    }

    func snapshot(at time: Timestamp) -> BeaconSnapshot {
        BeaconSnapshot(beaconID: beaconID, format: format, identifiers: identifiers, address: address, name: name,
                       rssi: rssi, smoothedRSSI: smoothedRSSI, distance: distance, measuredPower: measuredPower,
                       reportRate: rate.rate(at: time), lastSeen: lastSeen, fields: fields)
    }

    /// Takes identity parts from an observation; returns true when something that region matching looks at
    /// changed (format, identifiers, address, name).
    mutating func adoptIdentity(of observation: Observation) -> Bool {
        var changed = !identityKnown
        identityKnown = true
        if format != observation.format { format = observation.format; changed = true }
        if identifiers != observation.identifiers { identifiers = observation.identifiers; changed = true }
        if address != observation.address { address = observation.address; changed = true }
        if let newName = observation.name, newName != name { name = newName; changed = true }
        if let power = observation.measuredPower { measuredPower = power }
        if !observation.fields.isEmpty {
            if fields.isEmpty {
                fields = observation.fields
            } else {
                fields.merge(observation.fields) { _, new in new }
            }
        }
        return changed
    }
}
