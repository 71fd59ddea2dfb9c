import BeaconModel

extension RegionEngine {
    /// What was taught for this gateway (`TaughtTable`), applied to the next report of each pair.
    public var taught: TaughtTable { evaluator.taught }

    /// Replaces the taught table (a teach finished, a forget, a reload of the stored ones): the memberships of
    /// the beacons whose links or reference power changed derive their enter and exit levels again at their next
    /// report (from the taught link, or the configured condition when it is gone); states and evidence stay.
    public mutating func setTaught(_ table: TaughtTable) {
        let changed = table.changedBeacons(comparedWith: evaluator.taught)
        evaluator.taught = table
        guard !changed.isEmpty else { return }
        // A region taught like a typical device: its link (or a reference power) moves every device's levels.
        let everyone = evaluator.rules.contains { $0.taughtLike != nil }
        for slot in tracker.liveSlots where everyone || changed.contains(tracker.slots[slot].beaconID) {
            for index in tracker.slots[slot].memberships.indices {
                tracker.slots[slot].memberships[index].levelPower = RegionMembership.noLevels
            }
            guard changed.contains(tracker.slots[slot].beaconID) else { continue }
            if table.referencePowers[tracker.slots[slot].beaconID] == nil {
                // The advertised power comes back with the beacon's next report.
                tracker.slots[slot].measuredPower = nil
            } else {
                tracker.slots[slot].measuredPower = table.referencePowers[tracker.slots[slot].beaconID]
            }
        }
    }

    /// The enter and exit levels (dBm) a pair decides by now, and whether they come from a taught link; nil when
    /// the pair is not tracked or has not had a report with its levels yet. For status and tests.
    public func levels(of beaconID: String, in region: String) -> (enter: Double, exit: Double, taught: Bool)? {
        guard let slot = tracker.slot(of: beaconID), let regionIndex = evaluator.regionIndex(named: region),
            let membership = tracker.slots[slot].memberships.first(where: { Int($0.region) == regionIndex }),
            !membership.enterLevel.isNaN
        else { return nil }
        let like = evaluator.regionIndex(named: region).flatMap { evaluator.rules[$0].taughtLike }
        return (
            Double(membership.enterLevel), Double(membership.exitLevel),
            evaluator.taught.link(beaconID: beaconID, region: region, like: like) != nil
        )
    }
}

extension RegionEngine {
    /// Teaches at most this many at once (one per device and region or reference power).
    public static let maxTeaches = 8
    /// Seconds of capture time between a teach's progress updates.
    public static let teachProgressInterval = 5.0

    /// Teaches recording now.
    public var runningTeaches: [TeachRecording] { teaches }

    /// Starts recording a teach; a failure kind (`busy`: the same device is being taught here already, or
    /// `maxTeaches` run) when it cannot.
    public mutating func startTeach(_ recording: TeachRecording) -> String? {
        guard !teaches.contains(where: { $0.device == recording.device }) else { return "busy" }
        guard teaches.count < Self.maxTeaches else { return "busy" }
        teaches.append(recording)
        return nil
    }

    /// Whether the configured rules give the device this region: false when the beacon is tracked and does not
    /// match it (a teach for it would set nothing), true when it matches or is not heard yet.
    public func mayMatch(device: String, region: String) -> Bool {
        guard let slot = tracker.slot(of: device), tracker.slots[slot].identityKnown,
            let regionIndex = evaluator.regionIndex(named: region)
        else { return true }
        return tracker.slots[slot].memberships.contains { Int($0.region) == regionIndex }
    }

    /// Progress of the running teaches at `time`, and those whose window ended (removed).
    public mutating func advanceTeaches(to time: Timestamp) -> [TeachUpdate] {
        guard !teaches.isEmpty, time.isFinite else { return [] }
        var updates: [TeachUpdate] = []
        var running: [TeachRecording] = []
        for var recording in teaches {
            if time >= recording.end {
                updates.append(.done(recording))
                continue
            }
            if time - recording.lastProgress >= Self.teachProgressInterval {
                recording.lastProgress = time
                updates.append(.progress(recording, at: time))
            }
            running.append(recording)
        }
        teaches = running
        return updates
    }

    mutating func recordTeaches(_ beaconID: String, rssi: Int, at time: Timestamp) {
        for index in teaches.indices where teaches[index].device == beaconID {
            teaches[index].record(rssi: rssi, at: time)
        }
    }
}
