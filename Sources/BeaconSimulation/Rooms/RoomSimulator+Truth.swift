import BeaconModel

/// One stay of a person in the ground truth: scenario seconds `start`...`end` in `room` (nil: outside every
/// room, `not_home`).
public struct RoomStay: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var room: String?
    public init(start: Double, end: Double, room: String?) {
        self.start = start
        self.end = end
        self.room = room
    }
}

extension RoomSimulator {
    /// The person's true rooms over the scenario, sampled every `step` seconds (scenario time, from 0).
    public func truth(of person: ScenarioBeacon, step: Double = 0.1) -> [RoomStay] {
        var stays: [RoomStay] = []
        var tick = 0
        while Double(tick) * step <= scenario.duration {
            let t = Double(tick) * step
            let room = trueRoom(of: person, at: t)
            if let last = stays.last, last.room == room {
                stays[stays.count - 1].end = t
            } else {
                stays.append(RoomStay(start: t, end: t, room: room))
            }
            tick += 1
        }
        return stays
    }
}
