import BeaconModel

/// Turns observations into events: per-beacon tracking (filter, distance, presence), region enter/exit with
/// hysteresis and evidence, rate-limited sightings, and region state to persist. A value type owned by one task;
/// it never reads a clock: time comes with each observation, and `advance(to:)` lets the caller fire timeouts
/// (exit periods, away) when no reports arrive. Call `advance(to:)` about once a second.
public struct RegionEngine: Sendable {
    var evaluator: RegionEvaluator
    var tracker: BeaconTracker
    var changes = RegionStateChanges()
    /// No timeout is due before this time (a lower bound; `advance` scans only after it).
    var earliestDeadline: Timestamp = -.infinity
    /// Teaches recording now (`RegionEngine+Teaching`); usually empty.
    var teaches: [TeachRecording] = []

    public var settings: TrackerSettings { evaluator.settings }
    public var regions: [RegionRule] { evaluator.rules }
    public var counters: TrackerCounters { tracker.counters }
    /// Beacons tracked now.
    public var trackedCount: Int { tracker.count }

    /// - Parameters:
    ///   - restoring: persisted rows (from a `RegionStateStore`); rows older than `restoreMaxAge` at `now`, of
    ///     regions no longer configured, or in state `unknown` are ignored. A restored `inside` stays inside
    ///     without a new `enter`; the time since its last saved qualifying sighting counts towards its exit
    ///     period, up to half of it (`restoredExitShare`), and its dropout grace starts again at `now`.
    ///   - now: the capture-time clock at start.
    public init(
        settings: TrackerSettings = .default, regions: [RegionRule], distance: any DistanceEstimating,
        restoring: [PersistedRegionState] = [], now: Timestamp
    ) {
        evaluator = RegionEvaluator(rules: regions, settings: settings, estimator: distance)
        tracker = BeaconTracker(maxBeacons: settings.maxBeacons)
        restoreRows(restoring, now: now)
    }

    /// Restores persisted rows (the rules of `init(restoring:)`) into a running engine: for a caller whose
    /// capture-time clock starts later than construction (a replay). Rows of pairs the engine already tracks
    /// replace their state. Returns the number of rows taken.
    @discardableResult
    public mutating func restore(_ rows: [PersistedRegionState], now: Timestamp) -> Int {
        let taken = restoreRows(rows, now: now)
        earliestDeadline = -.infinity
        return taken
    }

    /// The share of the exit period a restart's downtime can use up (see `restoreRows`).
    static let restoredExitShare = 0.5

    @discardableResult
    private mutating func restoreRows(_ rows: [PersistedRegionState], now: Timestamp) -> Int {
        var taken = 0
        let fresh = rows.filter {
            $0.since.isFinite && $0.lastQualifying.isFinite && $0.updated.isFinite  // a damaged row is skipped
                && now - $0.updated <= settings.restoreMaxAge && $0.state != .unknown
        }
        .sorted { ($0.updated, $0.beaconID, $0.region) < ($1.updated, $1.beaconID, $1.region) }
        let filterSettings = settings.filter
        for row in fresh {
            guard let regionIndex = evaluator.regionIndex(named: row.region) else { continue }
            taken += 1
            let (slot, created, evicted) = tracker.slot(for: row.beaconID, at: now) {
                TrackedBeacon(beaconID: row.beaconID, filter: RSSIFilter(filterSettings), now: now)
            }
            _ = evicted
            if created {
                tracker.slots[slot].present = true
                tracker.slots[slot].lastSeen = row.lastQualifying
            }
            var membership = RegionMembership(
                region: Int32(regionIndex), state: row.state, since: row.since,
                lastQualifying: row.state == .inside ? max(row.lastQualifying, now) : row.lastQualifying)
            if row.state == .inside {
                // The downtime since the last saved qualifying sighting counts towards the exit period, up to
                // half of it: a beacon that left while the gateway was down exits about half an exit period
                // after the restart (not a whole one), and one still inside has half an exit period of
                // non-qualifying reports to show it is.
                let period = evaluator.rules[regionIndex].exitPeriod
                membership.outTime = Float(
                    min(max(now - row.lastQualifying, 0), period * RegionEngine.restoredExitShare))
            }
            membership.lastPersisted = row.updated
            if let filter = evaluator.rules[regionIndex].filter {
                tracker.slots[slot].regionFilters.append(RSSIFilter(filter))
                membership.filterSlot = Int16(tracker.slots[slot].regionFilters.count - 1)
            }
            tracker.slots[slot].memberships.removeAll { $0.region == Int32(regionIndex) }
            tracker.slots[slot].memberships.append(membership)
            tracker.slots[slot].lastSeen = max(tracker.slots[slot].lastSeen, row.lastQualifying)
            evaluator.updateDeadline(&tracker.slots[slot])
        }
        return taken
    }

    /// Processes one observation; returns the events it causes, in order.
    public mutating func process(_ observation: Observation) -> [EngineEvent] {
        var handle = TrackerHandle.none
        return process(observation, handle: &handle)
    }

    /// Processes one observation as `process(_:)` does. `handle`: the tracker handle of the observation's beacon
    /// from an earlier call, or `.none`; a valid one finds the beacon's slot without hashing its id (issue 45),
    /// a stale or foreign one is ignored. On return it names the beacon's slot (unchanged when the observation
    /// has no valid time).
    mutating func process(_ observation: Observation, handle: inout TrackerHandle) -> [EngineEvent] {
        tracker.counters.observations += 1
        guard observation.timestamp.isFinite else {
            tracker.counters.invalidTime += 1
            return []
        }
        var events: [EngineEvent] = []
        if observation.rssi == nil { tracker.counters.rssiUnavailable += 1 }
        let filterSettings = settings.filter
        let (slot, _, evicted) = tracker.slot(
            for: observation.beaconID, hint: handle, at: observation.timestamp
        ) {
            TrackedBeacon(
                beaconID: observation.beaconID, filter: RSSIFilter(filterSettings), now: observation.timestamp)
        }
        handle = tracker.handle(of: slot)
        if let evicted {
            evaluator.departure(of: evicted, at: observation.timestamp, events: &events, changes: &changes)
        }
        var time = observation.timestamp
        if time < tracker.slots[slot].lastSeen {
            tracker.counters.outOfOrder += 1
            time = tracker.slots[slot].lastSeen
        }
        evaluator.observe(&tracker.slots[slot], observation, at: time, events: &events, changes: &changes)
        if !teaches.isEmpty, let rssi = observation.rssi { recordTeaches(observation.beaconID, rssi: rssi, at: time) }
        earliestDeadline = min(earliestDeadline, tracker.slots[slot].deadline)
        return events
    }

    /// Fires timeouts due at `time` (exits after the exit period, `away` after the away timeout) for beacons
    /// that sent nothing since. Cheap when nothing is due.
    public mutating func advance(to time: Timestamp) -> [EngineEvent] {
        guard time.isFinite, time >= earliestDeadline else { return [] }
        var events: [EngineEvent] = []
        var next = Timestamp.infinity
        for slot in tracker.liveSlots {
            if time >= tracker.slots[slot].deadline {
                evaluator.expire(
                    &tracker.slots[slot], at: max(time, tracker.slots[slot].lastSeen),
                    events: &events, changes: &changes)
            }
            next = min(next, tracker.slots[slot].deadline)
        }
        earliestDeadline = next
        return events
    }

    /// A `state` event for every (region, beacon) pair whose state is known (`inside` or `outside`), ordered by
    /// region then beacon id: for the start, after reconnecting to the broker, or on request. Pairs still
    /// `unknown` are left out, so a snapshot never replaces a consumer's retained `inside`/`outside` with
    /// `unknown` (after a restart the engine may not know yet what the consumer was told before).
    public func stateSnapshot(at time: Timestamp) -> [EngineEvent] {
        var rows: [RegionEvent] = []
        for slot in tracker.liveSlots {
            let beacon = tracker.slots[slot]
            for membership in beacon.memberships where membership.state != .unknown {
                rows.append(
                    RegionEvent(
                        kind: .state, time: time, region: evaluator.names[Int(membership.region)],
                        beaconID: beacon.beaconID, state: membership.state, since: membership.since,
                        beacon: beacon.identityKnown ? beacon.snapshot(at: time) : nil))
            }
        }
        rows.sort { ($0.region, $0.beaconID) < ($1.region, $1.beaconID) }
        return rows.map { .region($0) }
    }

    /// Rows to save to the `RegionStateStore` since the last call: state changes, and refreshed `inside` rows
    /// (at most every `state_persist_interval_s` per pair while the beacon keeps qualifying).
    public mutating func takeStateChanges() -> [PersistedRegionState] { changes.take() }

    /// The region state of one beacon, for diagnostics and tests.
    public func state(of beaconID: String, in region: String) -> RegionState? {
        guard let slot = tracker.slot(of: beaconID), let regionIndex = evaluator.regionIndex(named: region) else {
            return nil
        }
        return tracker.slots[slot].memberships.first { Int($0.region) == regionIndex }?.state
    }

    /// What the tracker knows about a beacon now.
    public func snapshot(of beaconID: String, at time: Timestamp) -> BeaconSnapshot? {
        tracker.slot(of: beaconID).map { tracker.slots[$0].snapshot(at: time) }
    }
}
