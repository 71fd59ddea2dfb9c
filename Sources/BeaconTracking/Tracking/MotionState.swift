import BeaconModel

/// What a beacon says about its own motion (issue 30: "where a beacon reports motion, use it to shorten averaging
/// while it moves and lengthen it at rest"; docs/tracking-and-regions.md, "Motion"): BTHome's `moving` and
/// `motion` binary sensors, and Ruuvi's `movement_counter` (format 5), which counts the accelerometer's motion
/// events. A beacon that never reported any of them is neither moving nor resting: its evidence weighs as before.
struct MotionState: Sendable, Equatable {
    /// Until when the beacon counts as moving (capture time); −infinity: not since it was tracked.
    var movingUntil: Timestamp = -.infinity
    /// Whether the beacon ever reported its motion.
    package var reportsMotion = false

    /// Seconds a reported movement keeps the beacon moving (a Ruuvi counter steps once per motion event; BTHome
    /// `moving` is sent while it lasts).
    package static let hold: Double = 10
    /// The region evidence's weight while moving (twice as fast: a beacon carried in or out decides sooner)...
    static let movingWeight: Float = 2
    /// ...and at rest (half as fast: a beacon lying still near the boundary flaps less).
    static let restingWeight: Float = 0.5
    /// Seconds after a movement's hold at the plain weight before rest counts: a tag carried in and put down has
    /// to be decided at its new spot first. Without it the rest weight halved the evidence right after the tag
    /// came to rest, and the simulator's carry-in tags that report motion entered later than the same tags without
    /// (felt enter p95 at ≥ 1 Hz 178 s against 58 s on the measured radio, session 20). 60 s: about the plain
    /// rule's felt enter p95 there, so most enters complete before rest slows them.
    package static let settle: Double = 60

    /// Takes a report's fields (`previous`: the beacon's fields before this report) and returns the weight of
    /// this report's region evidence: 1 for a beacon that does not report motion.
    package mutating func weight(fields: [String: FieldValue], previous: [String: FieldValue], at time: Timestamp)
        -> Float
    {
        // The hot path (every report): most reports carry no fields and most beacons never report motion.
        if fields.isEmpty { return reportsMotion ? current(at: time) : 1 }
        if case let .bool(moving)? = fields["moving"] { take(moving: moving, at: time) }
        if case let .bool(moving)? = fields["motion"] { take(moving: moving, at: time) }
        // A counter says something only against the one before it: the first report's counts as neither.
        if case let .int(count)? = fields["movement_counter"], case let .int(before)? = previous["movement_counter"] {
            reportsMotion = true
            if before != count { movingUntil = max(movingUntil, time + Self.hold) }
        }
        guard reportsMotion else { return 1 }
        return current(at: time)
    }

    /// The weight of a beacon that reports its motion: moving, settling after a movement, or at rest.
    private func current(at time: Timestamp) -> Float {
        if time < movingUntil { return Self.movingWeight }
        return time < movingUntil + Self.settle ? 1 : Self.restingWeight
    }

    private mutating func take(moving: Bool, at time: Timestamp) {
        reportsMotion = true
        if moving { movingUntil = max(movingUntil, time + Self.hold) }
    }
}
