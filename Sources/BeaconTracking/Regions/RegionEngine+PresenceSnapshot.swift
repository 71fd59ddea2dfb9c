import BeaconModel

extension RegionEngine {
    /// A `presence` event with the current state (`seen`, `stale` or `away`) for every tracked beacon whose identity is
    /// known, ordered by beacon id: republished (retained) after every (re)connect and when Home Assistant
    /// comes online, so a broker that lost its retained messages does not leave trackers `unknown` until each
    /// beacon's presence changes. Entries restored from persisted region state and not sighted since have no
    /// identity yet and are left out (their first sighting publishes `seen`).
    public func presenceSnapshot(at time: Timestamp) -> [EngineEvent] {
        var rows: [PresenceEvent] = []
        for slot in tracker.liveSlots where tracker.slots[slot].identityKnown {
            let beacon = tracker.slots[slot]
            let state: PresenceState = beacon.present ? (beacon.stale ? .stale : .seen) : .away
            rows.append(evaluator.presence(of: beacon, state, snapshot: beacon.snapshot(at: time), at: time))
        }
        rows.sort { $0.beacon.beaconID < $1.beacon.beaconID }
        return rows.map { .presence($0) }
    }

    /// Tracked beacons now `stale`, and those whose away time is longer than the gateway's (a configured or
    /// learned hold), for telemetry (`beacons_stale`, `beacons_held`). One pass over the tracker.
    public var silenceCounts: (stale: Int, held: Int) {
        var stale = 0
        var held = 0
        for slot in tracker.liveSlots where tracker.slots[slot].identityKnown {
            let beacon = tracker.slots[slot]
            if beacon.present, beacon.stale { stale += 1 }
            if evaluator.awayTimeout(of: beacon) > settings.awayTimeout { held += 1 }
        }
        return (stale, held)
    }
}
