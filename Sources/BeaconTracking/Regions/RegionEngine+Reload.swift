import BeaconModel

extension RegionEngine {
    /// Applies a new configuration (SIGHUP). Tracker entries stay; the state of regions whose names stay is
    /// kept; new regions start `unknown` for matching beacons; removed regions are dropped without events.
    /// A changed gateway filter restarts every beacon's filter. Lowering `max_beacons` evicts the least
    /// recently seen beacons (with their exit/away events, returned).
    public mutating func reload(regions: [RegionRule], settings: TrackerSettings, now: Timestamp) -> [EngineEvent] {
        let old = evaluator
        evaluator = RegionEvaluator(rules: regions, settings: settings, estimator: old.estimator)
        evaluator.taught = old.taught
        var events: [EngineEvent] = []
        tracker.maxBeacons = settings.maxBeacons
        while tracker.count > settings.maxBeacons, let evicted = tracker.evictOldest() {
            old.departure(of: evicted, at: now, events: &events, changes: &changes)
        }
        let filterChanged = old.settings.filter != settings.filter
        for slot in tracker.liveSlots {
            if filterChanged {
                tracker.slots[slot].filter = RSSIFilter(settings.filter)
                tracker.slots[slot].smoothedRSSI = nil
            }
            var remapped: [RegionMembership] = []
            var filters: [RSSIFilter] = []
            for var membership in tracker.slots[slot].memberships {
                let oldRule = old.rules[Int(membership.region)]
                guard let newIndex = evaluator.regionIndex(named: oldRule.name) else { continue }
                membership.region = Int32(newIndex)
                membership.levelPower = RegionMembership.noLevels
                let oldSlot = Int(membership.filterSlot)
                membership.filterSlot = -1
                if let settings = regions[newIndex].filter {
                    let keep =
                        settings == oldRule.filter && oldSlot >= 0 && oldSlot < tracker.slots[slot].regionFilters.count
                    filters.append(keep ? tracker.slots[slot].regionFilters[oldSlot] : RSSIFilter(settings))
                    membership.filterSlot = Int16(filters.count - 1)
                }
                remapped.append(membership)
            }
            tracker.slots[slot].memberships = remapped
            tracker.slots[slot].regionFilters = filters
            if tracker.slots[slot].identityKnown {
                evaluator.rematch(&tracker.slots[slot], at: now, events: &events, changes: &changes)
            }
            evaluator.updateDeadline(&tracker.slots[slot])
        }
        earliestDeadline = -.infinity
        return events
    }
}
