import BeaconModel

/// Everything the tracker keeps about one beacon. Bounded: a fixed-size filter state (or a fixed-capacity
/// sample ring), one membership per matching region, the last value of each data field.
package struct TrackedBeacon: Sendable {
    package var beaconID: String
    package var format: String
    package var identifiers: [String]
    package var address: BluetoothAddress
    package var name: String?
    /// False for an entry restored from persisted region state and not sighted since.
    var identityKnown: Bool
    /// Compact storage (sentinels instead of optionals) keeps an entry small; see the computed properties.
    private var rawRSSI = Int16.min
    private var rawMeasuredPower = Int16.min
    private var rawSmoothed = Float.nan
    private var rawDistance = Float.nan
    private var rawLastPublishedDistance = Float.nan
    private var rawLastPublished = -Double.infinity
    package var fields: [String: FieldValue] = [:]
    package var lastSeen: Timestamp
    /// Silence (for `away`) counts from here: the last report, or the restore time for restored entries.
    var quietSince: Timestamp
    package var present: Bool
    /// Silent past the away timeout, but for no longer than the beacon usually is (`RegionEvaluator`).
    package var stale = false
    /// Earliest time a timeout (exit period, away) can fire for this beacon; kept by the evaluator.
    package var deadline: Timestamp = .infinity
    package var filter: RSSIFilter
    var rate = ReportRateMeter()
    /// Its usual gaps between reports (advertising interval, habitual silences).
    var silence = SilenceProfile()
    /// What it reports of its own motion (weighs its region evidence).
    var motion = MotionState()
    var memberships: [RegionMembership] = []
    /// Filters of regions that override the gateway's (see `RegionMembership.filterSlot`); usually empty.
    var regionFilters: [RSSIFilter] = []
    /// When the entry was last moved to the front of the seen-order list.
    var touched: Timestamp = -.infinity
    /// Least-recently-seen list links (slot indices, -1 for none).
    package var newer: Int32 = -1
    package var older: Int32 = -1

    package init(beaconID: String, filter: RSSIFilter, now: Timestamp) {
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

    package var rssi: Int? {
        get { rawRSSI == .min ? nil : Int(rawRSSI) }
        set { rawRSSI = newValue.map { Int16(clamping: $0) } ?? .min }
    }
    package var measuredPower: Int? {
        get { rawMeasuredPower == .min ? nil : Int(rawMeasuredPower) }
        set { rawMeasuredPower = newValue.map { Int16(clamping: max($0, -32_767)) } ?? .min }
    }
    package var smoothedRSSI: Double? {
        get { rawSmoothed.isNaN ? nil : Double(rawSmoothed) }
        set { rawSmoothed = newValue.map(Float.init) ?? .nan }
    }
    package var distance: Double? {
        get { rawDistance.isNaN ? nil : Double(rawDistance) }
        set { rawDistance = newValue.map(Float.init) ?? .nan }
    }
    package var lastPublished: Timestamp? {
        get { rawLastPublished == -.infinity ? nil : rawLastPublished }
        set { rawLastPublished = newValue ?? -.infinity }
    }
    var lastPublishedDistance: Double? {
        get { rawLastPublishedDistance.isNaN ? nil : Double(rawLastPublishedDistance) }
        set { rawLastPublishedDistance = newValue.map(Float.init) ?? .nan }
    }

    package func snapshot(at time: Timestamp) -> BeaconSnapshot {
        BeaconSnapshot(
            beaconID: beaconID, format: format, identifiers: identifiers, address: address, name: name,
            rssi: rssi, smoothedRSSI: smoothedRSSI, distance: distance, measuredPower: measuredPower,
            reportRate: rate.rate(at: time), lastSeen: lastSeen, fields: fields)
    }

    /// Takes identity parts from an observation; returns true when something that region matching looks at
    /// changed (format, identifiers, address, name).
    mutating func adoptIdentity(of observation: Observation) -> Bool {
        var changed = false
        if !identityKnown {
            identityKnown = true
            format = observation.format
            identifiers = observation.identifiers
            changed = true
        }
        // Format and identifiers are part of the canonical beacon id, so they cannot differ for the same id; the
        // address can (phones rotate theirs) and the name can arrive later (scan response).
        if address != observation.address {
            address = observation.address
            changed = true
        }
        if let newName = observation.name, newName != name {
            name = newName
            changed = true
        }
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
