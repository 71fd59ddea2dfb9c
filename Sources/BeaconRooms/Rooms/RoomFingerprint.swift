import BeaconModel

/// What every gateway heard of a device carried through one room during training (issue 29; docs/rooms.md,
/// "Training"): per gateway, the mean and spread of the device's levels (raw RSSI less the gateway's receive
/// offset at the time, as the arbiter compares them), how many reports, and the share of the training's seconds
/// in which the gateway heard the device at all (a gateway that rarely hears a room is evidence too).
///
/// Walks add up: `merged(with:)` pools the statistics, so a second spot in the same room widens the fingerprint.
public struct RoomFingerprint: Sendable, Equatable {
    public struct Level: Sendable, Equatable {
        /// Mean level, dB (calibrated: raw RSSI minus the gateway's receive offset).
        public var mean: Double
        /// Standard deviation of the single reports, dB.
        public var spread: Double
        /// Reports pooled.
        public var samples: Int
        /// Share of the training's whole seconds in which this gateway heard the device (0...1).
        public var heardShare: Double

        public init(mean: Double, spread: Double, samples: Int, heardShare: Double) {
            self.mean = mean
            self.spread = spread
            self.samples = samples
            self.heardShare = heardShare
        }
    }

    public var room: String
    /// Per gateway id.
    public var levels: [String: Level]
    /// Seconds of training pooled (all walks).
    public var seconds: Double
    /// Walks (training sessions) pooled.
    public var walks: Int
    /// Capture time of the last walk's end.
    public var recorded: Timestamp

    /// At most this many gateways per fingerprint (as the calibration's site).
    public static let maximumGateways = 64
    /// Seconds of training after which a room's fingerprint counts as complete (the minute per room).
    public static let fullSeconds = 60.0

    public init(room: String, levels: [String: Level], seconds: Double, walks: Int, recorded: Timestamp) {
        self.room = room
        self.levels = levels
        self.seconds = seconds
        self.walks = walks
        self.recorded = recorded
    }

    /// Whether the walk was heard by at least one of the site's gateways (`gatewayRooms`: gateway -> room), so
    /// that the classifier can count the room as trained (`RoomArbiter.classifiedRooms`, `rooms status`).
    public func heardByAny(of gatewayRooms: [String: String]) -> Bool {
        levels.keys.contains { gatewayRooms[$0] != nil }
    }

    /// A figure in 0...1 that says whether more training is needed: the share of `fullSeconds` trained (capped
    /// at 1), halved when only one gateway heard the device (one level cannot tell two rooms that one gateway
    /// hears alike), and 0 with no gateway.
    public var quality: Double {
        guard !levels.isEmpty else { return 0 }
        let time = min(1, max(0, seconds) / RoomFingerprint.fullSeconds)
        return levels.count >= 2 ? time : time / 2
    }

    /// This fingerprint and another walk of the same room pooled: means and variances weighted by reports, heard
    /// shares by seconds; a gateway heard in only one of them keeps its level with its heard share diluted.
    public func merged(with other: RoomFingerprint) -> RoomFingerprint {
        let total = max(seconds + other.seconds, 1e-9)
        var pooled: [String: Level] = [:]
        for gateway in Set(levels.keys).union(other.levels.keys) {
            let a = levels[gateway]
            let b = other.levels[gateway]
            let share = ((a?.heardShare ?? 0) * seconds + (b?.heardShare ?? 0) * other.seconds) / total
            guard let a, let b else {
                if let only = a ?? b { pooled[gateway] = Level(only, heardShare: share) }
                continue
            }
            let n = Double(a.samples + b.samples)
            guard n > 0 else { continue }
            let mean = (a.mean * Double(a.samples) + b.mean * Double(b.samples)) / n
            // Pooled second moments about the common mean.
            let moment =
                (Double(a.samples) * (a.spread * a.spread + (a.mean - mean) * (a.mean - mean))
                    + Double(b.samples) * (b.spread * b.spread + (b.mean - mean) * (b.mean - mean))) / n
            pooled[gateway] = Level(
                mean: mean, spread: max(0, moment).squareRoot(), samples: a.samples + b.samples, heardShare: share)
        }
        return RoomFingerprint(
            room: room, levels: pooled, seconds: seconds + other.seconds, walks: walks + other.walks,
            recorded: max(recorded, other.recorded))
    }
}

extension RoomFingerprint.Level {
    package init(_ level: RoomFingerprint.Level, heardShare: Double) {
        self.init(mean: level.mean, spread: level.spread, samples: level.samples, heardShare: heardShare)
    }
}

/// Records one training walk: every gateway's levels of one device for a stretch of capture time, then the
/// walk's `RoomFingerprint`. Pure; bounded (at most `maximumSamples` reports per gateway are kept as running
/// sums, gateways beyond `RoomFingerprint.maximumGateways` are refused).
public struct FingerprintRecorder: Sendable {
    public let room: String
    public let deviceID: String
    public let start: Timestamp
    public let duration: Double

    struct Sums: Sendable {
        package var count = 0
        package var sum = 0.0
        var squares = 0.0
        package var seconds: Set<Int> = []
    }

    var sums: [String: Sums] = [:]
    /// Reports refused (not finite, outside −127...20 dB, before the start or after the end, a gateway too many).
    public private(set) var refused = 0

    public init(room: String, deviceID: String, start: Timestamp, duration: Double) {
        self.room = room
        self.deviceID = deviceID
        self.start = start
        self.duration = max(0, duration)
    }

    public var end: Timestamp { start + duration }

    /// Whether the walk's time is over at `now`.
    public func isDone(at now: Timestamp) -> Bool { now >= end }

    /// One report of the device at a gateway: its calibrated level (raw RSSI minus the gateway's receive offset).
    /// False when refused.
    @discardableResult
    public mutating func add(gateway: String, level: Double, at time: Timestamp) -> Bool {
        guard level.isFinite, (-127...20).contains(level), time.isFinite, time >= start, time <= end,
            sums[gateway] != nil || sums.count < RoomFingerprint.maximumGateways
        else {
            refused += 1
            return false
        }
        var entry = sums[gateway] ?? Sums()
        entry.count += 1
        entry.sum += level
        entry.squares += level * level
        entry.seconds.insert(Int((time - start).rounded(.down)))
        sums[gateway] = entry
        return true
    }

    /// Gateways that heard the device so far, and reports.
    public var gatewaysHeard: Int { sums.count }
    public var reports: Int { sums.values.reduce(0) { $0 + $1.count } }

    /// The walk as a fingerprint (nil when no gateway heard the device).
    public func fingerprint() -> RoomFingerprint? {
        guard !sums.isEmpty else { return nil }
        let wholeSeconds = max(1, Int(duration.rounded(.up)))
        var levels: [String: RoomFingerprint.Level] = [:]
        for (gateway, entry) in sums where entry.count > 0 {
            let n = Double(entry.count)
            let mean = entry.sum / n
            let variance = max(0, entry.squares / n - mean * mean)
            levels[gateway] = RoomFingerprint.Level(
                mean: mean, spread: variance.squareRoot(), samples: entry.count,
                heardShare: min(1, Double(entry.seconds.count) / Double(wholeSeconds)))
        }
        return RoomFingerprint(room: room, levels: levels, seconds: duration, walks: 1, recorded: end)
    }
}

/// Every room's fingerprint of a site (at most `maximumRooms`), and their retained messages on
/// `<prefix>/rooms/fingerprint/<room>` (docs/mqtt.md).
public struct FingerprintBook: Sendable, Equatable {
    public private(set) var rooms: [String: RoomFingerprint] = [:]

    public static let maximumRooms = 64

    public init(_ fingerprints: [RoomFingerprint] = []) {
        for fingerprint in fingerprints { _ = add(fingerprint) }
    }

    public var isEmpty: Bool { rooms.isEmpty }

    public subscript(room: String) -> RoomFingerprint? { rooms[room] }

    /// Adds a walk to its room (pooled with what the room has). False when the book is full.
    @discardableResult
    public mutating func add(_ walk: RoomFingerprint) -> Bool {
        if let known = rooms[walk.room] {
            rooms[walk.room] = known.merged(with: walk)
            return true
        }
        guard rooms.count < FingerprintBook.maximumRooms else { return false }
        rooms[walk.room] = walk
        return true
    }

    /// Replaces a room's fingerprint as a whole (a retained message read back). False when the book is full.
    @discardableResult
    public mutating func set(_ fingerprint: RoomFingerprint) -> Bool {
        guard rooms[fingerprint.room] != nil || rooms.count < FingerprintBook.maximumRooms else { return false }
        rooms[fingerprint.room] = fingerprint
        return true
    }

    /// Removes a room's fingerprint; whether it had one.
    @discardableResult
    public mutating func forget(_ room: String) -> Bool { rooms.removeValue(forKey: room) != nil }

    /// The retained message of a room's fingerprint (JSON, keys in this order; docs/mqtt.md).
    public static func payload(_ fingerprint: RoomFingerprint, gateway: String) -> String {
        func rounded(_ value: Double) -> JSONValue { .double((value * 100).rounded() / 100) }
        let rows: [JSONValue] = fingerprint.levels.keys.sorted().compactMap { id in
            guard let level = fingerprint.levels[id] else { return nil }
            return .object([
                ("gateway", .string(id)),
                ("mean_db", rounded(level.mean)),
                ("spread_db", rounded(level.spread)),
                ("samples", .int(Int64(level.samples))),
                ("heard_share", .double((level.heardShare * 1000).rounded() / 1000)),
            ])
        }
        return JSONValue.object([
            ("kind", .string("fingerprint")),
            ("room", .string(fingerprint.room)),
            ("gateway", .string(gateway)),
            ("recorded", .double(fingerprint.recorded)),
            ("seconds", rounded(fingerprint.seconds)),
            ("walks", .int(Int64(fingerprint.walks))),
            ("quality", .double((fingerprint.quality * 1000).rounded() / 1000)),
            ("gateways", .array(rows)),
        ]).serialized
    }

    /// Reads a retained fingerprint (`payload`'s format); nil when it is not one. Rows of gateways not in
    /// `site`, or with values out of range (mean outside −127...20 dB, spread outside 0...60 dB, shares outside
    /// 0...1), are skipped; a fingerprint left with no row is refused.
    public static func fingerprint(payload: [UInt8], site: Set<String>) -> RoomFingerprint? {
        guard payload.count <= 65_536, let text = String(validating: payload, as: UTF8.self),
            let json = try? JSONValue(parsing: text, maxDepth: 8),
            json["kind"]?.roomText == "fingerprint", let room = json["room"]?.roomText, !room.isEmpty,
            room.utf8.count <= 128, let recorded = json["recorded"]?.roomNumber, recorded.isFinite,
            let seconds = json["seconds"]?.roomNumber, seconds.isFinite, (0...1e7).contains(seconds),
            let walks = json["walks"]?.roomNumber, (1...1e6).contains(walks),
            case let .array(rows)? = json["gateways"]
        else { return nil }
        var levels: [String: RoomFingerprint.Level] = [:]
        for row in rows.prefix(RoomFingerprint.maximumGateways) {
            guard let id = row["gateway"]?.roomText, site.contains(id),
                let mean = row["mean_db"]?.roomNumber, mean.isFinite, (-127...20).contains(mean),
                let spread = row["spread_db"]?.roomNumber, spread.isFinite, (0...60).contains(spread),
                let samples = row["samples"]?.roomNumber, (1...1e9).contains(samples),
                let share = row["heard_share"]?.roomNumber, share.isFinite, (0...1).contains(share)
            else { continue }
            levels[id] = RoomFingerprint.Level(mean: mean, spread: spread, samples: Int(samples), heardShare: share)
        }
        guard !levels.isEmpty else { return nil }
        return RoomFingerprint(room: room, levels: levels, seconds: seconds, walks: Int(walks), recorded: recorded)
    }
}
