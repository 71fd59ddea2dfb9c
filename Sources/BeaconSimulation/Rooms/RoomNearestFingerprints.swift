import BeaconModel
import BeaconRooms

/// `knn`: the plain fingerprint rule users run (the Bermuda fork's and PadSpan's style), on the training
/// phase's per-second vectors (`RoomTrainingVector`). Every second, per beacon, the vector of each gateway's
/// latest calibrated level (raw RSSI less the receive offset in force; not heard in the last
/// `RoomTrainingRun.vectorFreshness` seconds: `RoomTrainingRun.missingLevel`), then the `k` (5) nearest training
/// vectors by Euclidean distance vote: the most votes win, a tie goes to the tied room with the nearest vector.
/// The decided room follows the votes at once except for one smoothing: it changes to a room that won at least
/// 2 of the last 3 seconds' votes (the first room is the first vote). Heard by no gateway for the away timeout:
/// `not_home`, as the baselines.
///
/// Receive offsets: self-calibration's as each solve becomes available (the `calibrated` row's; none before the
/// first), so the rule is calibrated as the `calibrated` and `trained` rows are.
public struct RoomNearestFingerprints: RoomDeciding, Sendable {
    public var name: String { "knn" }
    let gatewayIDs: [String]
    let vectors: [RoomTrainingVector]
    let steps: [RoomCalibrationRun.Step]
    let awayTimeout: Double
    let k: Int
    var offsets: [String: Double] = [:]
    var nextStep = 0

    struct Track: Sendable {
        var room: String?? = nil
        var latest: [String: (level: Double, time: Timestamp)] = [:]
        var lastHeard: Timestamp = -.infinity
        var votes: [String] = []
    }
    var tracks: [String: Track] = [:]

    /// Votes remembered per beacon (the majority smoothing's window).
    static let window = 3

    public init(
        gatewayIDs: [String], vectors: [RoomTrainingVector], steps: [RoomCalibrationRun.Step] = [],
        awayTimeout: Double, k: Int = 5
    ) {
        self.gatewayIDs = gatewayIDs
        self.vectors = vectors.filter { $0.levels.count == gatewayIDs.count }
        self.steps = steps
        self.awayTimeout = awayTimeout
        self.k = max(1, k)
    }

    public func room(of beaconID: String) -> String?? { tracks[beaconID]?.room }

    mutating func catchUp(to time: Timestamp) {
        while nextStep < steps.count, steps[nextStep].time <= time {
            offsets = steps[nextStep].offsets
            nextStep += 1
        }
    }

    public mutating func process(_ sighting: RoomSighting) -> [RoomChange] {
        catchUp(to: sighting.time)
        let level = (sighting.rawRSSI ?? sighting.rssi) - (offsets[sighting.gatewayID] ?? 0)
        guard gatewayIDs.contains(sighting.gatewayID), level.isFinite, sighting.time.isFinite else { return [] }
        var track = tracks[sighting.beaconID] ?? Track()
        track.latest[sighting.gatewayID] = (level, sighting.time)
        track.lastHeard = max(track.lastHeard, sighting.time)
        tracks[sighting.beaconID] = track
        return []
    }

    public mutating func advance(to now: Timestamp) -> [RoomChange] {
        catchUp(to: now)
        var changes: [RoomChange] = []
        for id in tracks.keys.sorted() {
            guard var track = tracks[id] else { continue }
            defer { tracks[id] = track }
            let current: String? = track.room.flatMap { $0 }
            if now - track.lastHeard >= awayTimeout {
                track.votes = []
                track.latest = [:]
                guard let current else { continue }
                track.room = .some(nil)
                changes.append(RoomChange(beaconID: id, time: now, from: current, to: nil, hadRoom: true))
                continue
            }
            let vector = gatewayIDs.map { gateway in
                track.latest[gateway].flatMap { now - $0.time <= RoomTrainingRun.vectorFreshness ? $0.level : nil }
                    ?? RoomTrainingRun.missingLevel
            }
            guard vector.contains(where: { $0 > RoomTrainingRun.missingLevel }), let vote = vote(vector) else {
                continue
            }
            track.votes.append(vote)
            if track.votes.count > Self.window { track.votes.removeFirst(track.votes.count - Self.window) }
            let winner: String?
            if current == nil {
                winner = vote
            } else {
                winner = Set(track.votes).first { room in track.votes.filter { $0 == room }.count * 2 > Self.window }
            }
            guard let winner, winner != current else { continue }
            let had = track.room != nil
            track.room = .some(winner)
            changes.append(RoomChange(beaconID: id, time: now, from: current, to: winner, hadRoom: had))
        }
        return changes
    }

    /// The room the `k` nearest training vectors vote for (ties: the tied room with the nearest vector).
    func vote(_ vector: [Double]) -> String? {
        var nearest: [(distance: Double, room: String)] = []
        for candidate in vectors {
            var sum = 0.0
            for (a, b) in zip(vector, candidate.levels) { sum += (a - b) * (a - b) }
            if nearest.count < k {
                nearest.append((sum, candidate.room))
                nearest.sort { $0.distance < $1.distance }
            } else if let last = nearest.last, sum < last.distance {
                nearest[nearest.count - 1] = (sum, candidate.room)
                nearest.sort { $0.distance < $1.distance }
            }
        }
        var counts: [String: Int] = [:]
        for entry in nearest { counts[entry.room, default: 0] += 1 }
        guard let most = counts.values.max() else { return nil }
        // `nearest` is sorted: the first room with the most votes has the nearest vector among the tied.
        return nearest.first { counts[$0.room] == most }?.room
    }
}
