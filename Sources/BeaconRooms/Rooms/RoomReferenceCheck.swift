import BeaconModel

/// Stationary reference tags (issue 29; docs/rooms.md, "Reference tags"): beacons the user declared in a room
/// (`rooms.reference_tags`, a tag on a shelf), whose decided room is a continuous check of the site's
/// decisions. Every tick adds the seconds since the last one to each tag's tally: right (decided in its declared
/// room), unknown (`unknown`: its room's gateways are all offline) or wrong (another room or `not_home`); an
/// undecided tag counts nothing. A tag that turns wrong, or right again, leaves a notice for the log.
///
/// Pure: time comes with every call.
public struct RoomReferenceCheck: Sendable, Equatable {
    public struct Notice: Sendable, Equatable {
        public var beaconID: String
        public var declared: String
        /// The decided room (`not_home` for none).
        public var decided: String
        public var wrong: Bool
        public var time: Timestamp
    }

    public struct Tally: Sendable, Equatable {
        public var right: Double = 0
        public var wrong: Double = 0
        public var unknown: Double = 0
        package var lastTime: Timestamp?
        /// Whether the tag was wrong at the last tick (nil: undecided so far).
        public var isWrong: Bool?
    }

    /// Declared tags: beacon id -> room.
    public let tags: [String: String]
    public private(set) var tallies: [String: Tally] = [:]
    package var notices: [Notice] = []

    /// At most this many tags (`check-config` says so) and pending notices.
    public static let maximumTags = 64
    /// A gap between ticks longer than this counts as this much (a stopped process does not add hours).
    static let maximumStep: Double = 5

    public init(tags: [String: String]) {
        self.tags = tags
    }

    /// One tick: each tag's decided room (`room(beaconID)`: nil undecided, `.some(nil)` `not_home`) at `now`.
    public mutating func observe(now: Timestamp, room: (String) -> String??) {
        guard now.isFinite else { return }
        for (beacon, declared) in tags {
            var tally = tallies[beacon] ?? Tally()
            defer { tallies[beacon] = tally }
            let step = tally.lastTime.map { max(0, min(now - $0, Self.maximumStep)) } ?? 0
            tally.lastTime = now
            guard let decided = room(beacon) else { continue }
            let name = decided ?? "not_home"
            let wrong: Bool
            if name == declared {
                tally.right += step
                wrong = false
            } else if name == RoomArbiter.unknownRoom {
                tally.unknown += step
                wrong = false
            } else {
                tally.wrong += step
                wrong = true
            }
            if tally.isWrong != wrong, wrong || tally.isWrong == true, notices.count < Self.maximumTags {
                notices.append(Notice(beaconID: beacon, declared: declared, decided: name, wrong: wrong, time: now))
            }
            tally.isWrong = wrong
        }
    }

    /// The notices since the last call (at most `maximumTags`; more are not kept).
    public mutating func takeNotices() -> [Notice] {
        defer { notices.removeAll() }
        return notices
    }

    /// Seconds summed over every tag, and the tags wrong now.
    public var rightSeconds: Double { tallies.values.reduce(0) { $0 + $1.right } }
    public var wrongSeconds: Double { tallies.values.reduce(0) { $0 + $1.wrong } }
    public var unknownSeconds: Double { tallies.values.reduce(0) { $0 + $1.unknown } }
    public var wrongNow: Int { tallies.values.count { $0.isWrong == true } }
}
