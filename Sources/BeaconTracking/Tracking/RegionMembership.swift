import BeaconModel

/// The state of one beacon in one region it matches, kept inside the beacon's tracker entry.
struct RegionMembership: Sendable {
    /// Index into the engine's region list.
    package var region: Int32
    package var state: RegionState
    /// When `state` began.
    package var since: Timestamp
    /// Last sighting that kept the beacon inside (the exit period runs from here).
    package var lastQualifying: Timestamp
    /// Last report with RSSI judged for this pair (the time the next report stands for runs from here).
    var lastSample: Timestamp = -.infinity
    /// While inside: seconds heard without qualifying since `lastQualifying` (silences longer than
    /// `RegionEvaluator.heardGap` not counted), up to `lastSample`.
    var outTime: Float = 0
    /// When this pair was last handed out by `takeStateChanges()`.
    var lastPersisted: Timestamp = -.infinity
    /// CUSUM of (clamped `rssi - enterLevel` − margin) × seconds (dB·s) while not inside.
    var enterSum: Float = 0
    /// While inside: the exit debt, CUSUM of (`exitLevel - rssi`) × seconds, bounded by the region's
    /// `exitEvidence`. While unknown: CUSUM of (`enterLevel - rssi` − margin) × seconds (evidence of being outside).
    var otherSum: Float = 0
    /// While not inside: the fast path's CUSUM of (clamped `rssi - enterLevel` − fast margin) × seconds, and the
    /// reports in the run that built it.
    var fastSum: Float = 0
    var fastReports: Int16 = 0
    var fastRunStart: Timestamp = 0
    /// Start of the run of reports that built `enterSum`.
    var runStart: Timestamp = 0
    /// Cached RSSI levels for the region's conditions, valid for `levelPower`.
    package var enterLevel: Float = .nan
    package var exitLevel: Float = .nan
    var levelPower: Int16 = RegionMembership.noLevels
    /// Index into the beacon's `regionFilters` when the region overrides the gateway's filter, else -1.
    /// (Kept out of this struct so memberships stay plain data: copying one costs no reference counting.)
    var filterSlot: Int16 = -1

    static let noLevels = Int16.min
    static let levelsForNilPower = Int16.min + 1

    package init(region: Int32, state: RegionState, since: Timestamp, lastQualifying: Timestamp) {
        self.region = region
        self.state = state
        self.since = since
        self.lastQualifying = lastQualifying
    }
}
