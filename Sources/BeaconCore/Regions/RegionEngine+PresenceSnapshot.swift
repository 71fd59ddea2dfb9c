extension RegionEngine {
    /// A `presence` event with the current state (`seen` or `away`) for every tracked beacon whose identity is
    /// known, ordered by beacon id: republished (retained) after every (re)connect and when Home Assistant
    /// comes online, so a broker that lost its retained messages does not leave trackers `unknown` until each
    /// beacon's presence changes. Entries restored from persisted region state and not sighted since have no
    /// identity yet and are left out (their first sighting publishes `seen`).
    public func presenceSnapshot(at time: Timestamp) -> [EngineEvent] {
        var rows: [PresenceEvent] = []
        for slot in tracker.liveSlots where tracker.slots[slot].identityKnown {
            let beacon = tracker.slots[slot]
            rows.append(
                PresenceEvent(time: time, state: beacon.present ? .seen : .away, beacon: beacon.snapshot(at: time)))
        }
        rows.sort { $0.beacon.beaconID < $1.beacon.beaconID }
        return rows.map { .presence($0) }
    }
}
