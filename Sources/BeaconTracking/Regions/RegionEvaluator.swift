import BeaconFormats
import BeaconModel

/// The read-only half of the region engine: the configured regions, the settings and the distance model,
/// and the per-beacon logic that uses them. The engine owns the mutable state (tracker, change log) and
/// hands one beacon at a time to these functions.
struct RegionEvaluator: Sendable {
    package let rules: [RegionRule]
    package let parameters: [RegionParameters]
    package let names: [String]
    package let matches: [CompiledRegionMatch]
    package let settings: TrackerSettings
    package let estimator: any DistanceEstimating
    /// Whether any rule looks at the address or the name (only then does a change of those re-match).
    let usesAddressOrName: Bool
    /// Taught links and reference powers for this gateway (`RegionEngine.setTaught`).
    package var taught = TaughtTable()

    package init(rules: [RegionRule], settings: TrackerSettings, estimator: any DistanceEstimating) {
        self.rules = rules
        self.settings = settings
        self.estimator = estimator
        parameters = rules.map(RegionParameters.init)
        names = rules.map(\.name)
        matches = rules.map { CompiledRegionMatch($0.match) }
        usesAddressOrName = rules.contains { $0.match.address != nil || $0.match.namePattern != nil }
    }

    func regionIndex(named name: String) -> Int? { names.firstIndex(of: name) }

    /// Applies one observation (at `time`, already clamped to be monotonic for this beacon) to `beacon`.
    package func observe(
        _ beacon: inout TrackedBeacon, _ observation: Observation, at time: Timestamp,
        events: inout [EngineEvent], changes: inout RegionStateChanges
    ) {
        expire(&beacon, at: time, events: &events, changes: &changes)

        // Button / dimmer / command events: a sighting now, and not carried into later ones.
        var observation = observation
        let eventFields = observation.fields.isEmpty ? nil : SensorEventFields.names(of: observation.format)
        var freshEvent = false
        if let eventFields {
            freshEvent = SensorEventFields.admit(&observation, events: eventFields, previous: beacon.fields)
        }
        let motionWeight = beacon.motion.weight(fields: observation.fields, previous: beacon.fields, at: time)
        let wasKnown = beacon.identityKnown
        if wasKnown { beacon.silence.record(gap: time - beacon.lastSeen, at: time) }
        let identityChanged = beacon.adoptIdentity(of: observation)
        if !taught.referencePowers.isEmpty, let power = taught.referencePowers[beacon.beaconID] {
            beacon.measuredPower = power  // learned at 1 m (`--at 1m`): replaces the advertised power
        }
        let firstEventIndex = events.count
        if identityChanged && (!wasKnown || usesAddressOrName) {
            rematch(&beacon, at: time, events: &events, changes: &changes)
        }
        beacon.lastSeen = time
        beacon.quietSince = time
        beacon.rate.record(at: time)
        beacon.rssi = observation.rssi
        if let rssi = observation.rssi {
            let smoothed = beacon.filter.add(rssi, at: time, settings: settings.filter)
            beacon.smoothedRSSI = smoothed
            beacon.distance = estimator.distance(
                rssi: smoothed, measuredPower: beacon.measuredPower,
                format: beacon.format)
        }

        var regionChanged = events.count > firstEventIndex
        for index in beacon.memberships.indices {
            let region = Int(beacon.memberships[index].region)
            let params = parameters[region]
            var sample = observation.rssi.map(Double.init)
            let slot = Int(beacon.memberships[index].filterSlot)
            if let rssi = observation.rssi, let filter = params.filter, slot >= 0, slot < beacon.regionFilters.count {
                sample = beacon.regionFilters[slot].add(rssi, at: time, settings: filter)
            }
            if let kind = step(
                &beacon.memberships[index], params: params, sample: sample, beaconID: beacon.beaconID,
                format: beacon.format, measuredPower: beacon.measuredPower, motionWeight: motionWeight, at: time,
                changes: &changes)
            {
                regionChanged = true
                events.append(
                    .region(
                        RegionEvent(
                            kind: kind, time: time, region: names[region], beaconID: beacon.beaconID,
                            state: kind == .enter ? .inside : .outside, since: time, beacon: nil)))
            }
        }
        if !beacon.present || beacon.stale || regionChanged {
            let snapshot = beacon.snapshot(at: time)
            if !beacon.present || beacon.stale {
                beacon.present = true
                beacon.stale = false
                events.insert(.presence(presence(of: beacon, .seen, snapshot: snapshot, at: time)), at: firstEventIndex)
            }
            if regionChanged {
                for index in events.indices.dropFirst(firstEventIndex) {
                    if case var .region(event) = events[index], event.beacon == nil {
                        event.beacon = snapshot
                        events[index] = .region(event)
                    }
                }
            }
        }
        if freshEvent
            || settings.publish.isDue(
                now: time, distance: beacon.distance, lastTime: beacon.lastPublished,
                lastDistance: beacon.lastPublishedDistance, regionChanged: regionChanged)
        {
            beacon.lastPublished = time
            beacon.lastPublishedDistance = beacon.distance
            events.append(.sighting(SightingEvent(time: time, beacon: beacon.snapshot(at: time))))
        }
        if freshEvent, let eventFields {
            beacon.fields = beacon.fields.filter { !SensorEventFields.isEventField($0.key, eventFields) }
        }
        updateDeadline(&beacon)
    }

    /// Fires what is due at `time`: exits whose exit period ran out, then `away` after the away timeout.
    package func expire(
        _ beacon: inout TrackedBeacon, at time: Timestamp, events: inout [EngineEvent],
        changes: inout RegionStateChanges
    ) {
        guard time >= beacon.deadline else { return }
        defer { updateDeadline(&beacon) }
        // Exits below leave presence and the silence profile alone, so the away time holds for the whole call.
        let away = awayTimeout(of: beacon)
        let hold = silenceHold(of: beacon, away: away)
        for index in beacon.memberships.indices where beacon.memberships[index].state == .inside {
            let region = Int(beacon.memberships[index].region)
            guard exitDue(beacon.memberships[index], params: parameters[region], hold: hold, at: time) else {
                continue
            }
            exit(&beacon, membership: index, at: time, events: &events, changes: &changes)
        }
        guard beacon.present else { return }
        let silence = time - beacon.quietSince
        if silence >= away {
            beacon.present = false
            beacon.stale = false
            events.append(.presence(presence(of: beacon, .away, snapshot: beacon.snapshot(at: time), at: time)))
        } else if !beacon.stale, silence >= settings.awayTimeout {
            beacon.stale = true
            events.append(.presence(presence(of: beacon, .stale, snapshot: beacon.snapshot(at: time), at: time)))
        }
    }

    /// The silence after which the beacon turns `away`: its own away timeout when one is configured
    /// (`devices.known[].away_timeout_s`), else the gateway's, lengthened for a beacon that has shown it goes
    /// quiet longer and comes back (`SilenceProfile.usualSilence`) to one and a half times that silence, at
    /// most `stale_max_s`. Past the gateway's timeout and short of this one the beacon is `stale`.
    package func awayTimeout(of beacon: TrackedBeacon) -> Double {
        if !settings.awayTimeoutOverrides.isEmpty, let configured = settings.awayTimeoutOverrides[beacon.beaconID] {
            return configured
        }
        guard settings.staleMax > settings.awayTimeout, let usual = beacon.silence.usualSilence,
            usual > settings.awayTimeout
        else { return settings.awayTimeout }
        return min(settings.staleMax, Self.habitualSilenceFactor * usual)
    }

    /// A learned hold is this many times the longest habitual silence (the bucket's upper edge already
    /// rounds up by up to a half-octave).
    static let habitualSilenceFactor = 1.5

    /// When a silent, present beacon's regions stop being held (its away time, `away`, from `awayTimeout(of:)`);
    /// -infinity when nothing holds them, that is when the beacon turns away at the gateway's timeout or sooner.
    func silenceHold(of beacon: TrackedBeacon, away: Double) -> Timestamp {
        beacon.present && away > settings.awayTimeout ? beacon.quietSince + away : -.infinity
    }

    /// A presence event with the beacon's learned figures.
    package func presence(
        of beacon: TrackedBeacon, _ state: PresenceState, snapshot: BeaconSnapshot, at time: Timestamp
    ) -> PresenceEvent {
        PresenceEvent(
            time: time, state: state, beacon: snapshot, interval: beacon.silence.interval,
            awayAfter: awayTimeout(of: beacon))
    }

    private func exit(
        _ beacon: inout TrackedBeacon, membership index: Int, at time: Timestamp,
        events: inout [EngineEvent], changes: inout RegionStateChanges
    ) {
        let region = Int(beacon.memberships[index].region)
        transition(&beacon.memberships[index], to: .outside, at: time, beaconID: beacon.beaconID, changes: &changes)
        events.append(
            .region(
                RegionEvent(
                    kind: .exit, time: time, region: names[region], beaconID: beacon.beaconID,
                    state: .outside, since: time,
                    beacon: beacon.identityKnown ? beacon.snapshot(at: time) : nil)))
    }

    /// Sets `beacon.deadline`: the earliest time at which `expire` would fire something for this beacon.
    func updateDeadline(_ beacon: inout TrackedBeacon) {
        let away = awayTimeout(of: beacon)
        var deadline = Timestamp.infinity
        if beacon.present {
            // Not yet stale but held: the next thing due is `stale`, at the gateway's timeout.
            deadline = beacon.quietSince + (!beacon.stale && away > settings.awayTimeout ? settings.awayTimeout : away)
        }
        let hold = silenceHold(of: beacon, away: away)
        for index in beacon.memberships.indices where beacon.memberships[index].state == .inside {
            let membership = beacon.memberships[index]
            deadline = min(
                deadline, exitDeadline(membership, params: parameters[Int(membership.region)], hold: hold))
        }
        beacon.deadline = deadline
    }

    /// Events for a beacon leaving the tracker (eviction): exit from every region it is inside, then away.
    func departure(
        of beacon: TrackedBeacon, at time: Timestamp, events: inout [EngineEvent],
        changes: inout RegionStateChanges
    ) {
        var beacon = beacon
        for index in beacon.memberships.indices where beacon.memberships[index].state == .inside {
            exit(&beacon, membership: index, at: time, events: &events, changes: &changes)
        }
        if beacon.present {
            events.append(.presence(presence(of: beacon, .away, snapshot: beacon.snapshot(at: time), at: time)))
        }
    }

    /// Recomputes which regions match the beacon: keeps the state of regions that still match, adds new ones as
    /// `unknown`, and drops the rest (an `exit` first for those the beacon was inside).
    func rematch(
        _ beacon: inout TrackedBeacon, at time: Timestamp, events: inout [EngineEvent],
        changes: inout RegionStateChanges
    ) {
        var kept: [RegionMembership] = []
        var filters: [RSSIFilter] = []
        let subject = CompiledRegionMatch.Subject(
            format: beacon.format, identifiers: beacon.identifiers,
            address: beacon.address, name: beacon.name)
        for ruleIndex in matches.indices {
            let existing = beacon.memberships.firstIndex { Int($0.region) == ruleIndex }
            if beacon.identityKnown && matches[ruleIndex].matches(subject) {
                var membership =
                    existing.map { beacon.memberships[$0] }
                    ?? RegionMembership(region: Int32(ruleIndex), state: .unknown, since: time, lastQualifying: time)
                if let settings = parameters[ruleIndex].filter {
                    let old = Int(membership.filterSlot)
                    filters.append(
                        old >= 0 && old < beacon.regionFilters.count ? beacon.regionFilters[old] : RSSIFilter(settings))
                    membership.filterSlot = Int16(filters.count - 1)
                } else {
                    membership.filterSlot = -1
                }
                kept.append(membership)
            } else if let existing, beacon.memberships[existing].state == .inside, beacon.identityKnown {
                var membership = beacon.memberships[existing]
                transition(&membership, to: .outside, at: time, beaconID: beacon.beaconID, changes: &changes)
                events.append(
                    .region(
                        RegionEvent(
                            kind: .exit, time: time, region: names[ruleIndex],
                            beaconID: beacon.beaconID, state: .outside, since: time, beacon: nil)))
            }
        }
        // Exact capacity: an entry holds no slack for memberships it will never have.
        beacon.memberships = []
        beacon.memberships.reserveCapacity(kept.count)
        beacon.memberships.append(contentsOf: kept)
        beacon.regionFilters = filters
    }

    package func transition(
        _ membership: inout RegionMembership, to state: RegionState, at time: Timestamp,
        beaconID: String, changes: inout RegionStateChanges
    ) {
        membership.state = state
        membership.since = time
        membership.enterSum = 0
        membership.fastSum = 0
        membership.fastReports = 0
        membership.otherSum = 0
        membership.outTime = 0
        if state == .inside { membership.lastQualifying = time }
        persist(&membership, beaconID: beaconID, at: time, changes: &changes)
    }

    func persist(
        _ membership: inout RegionMembership, beaconID: String, at time: Timestamp,
        changes: inout RegionStateChanges
    ) {
        membership.lastPersisted = time
        changes.record(
            PersistedRegionState(
                region: names[Int(membership.region)], beaconID: beaconID,
                state: membership.state, since: membership.since,
                lastQualifying: membership.lastQualifying, updated: time))
    }
}
