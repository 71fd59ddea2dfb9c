import BeaconModel

/// A point of a beacon's path: position (metres, gateway at the origin) at a scenario time. Between waypoints
/// the beacon moves in a straight line; before the first and after the last it stays put.
public struct Waypoint: Sendable, Equatable {
    public var time: Double
    public var x: Double
    public var y: Double
    public init(time: Double, x: Double, y: Double = 0) {
        self.time = time
        self.x = x
        self.y = y
    }
}

/// A period in which a beacon is not heard at all.
public struct Dropout: Sendable, Equatable {
    public var start: Double
    public var duration: Double
    public init(start: Double, duration: Double) {
        self.start = start
        self.duration = duration
    }
    public func contains(_ time: Double) -> Bool { time >= start && time < start + duration }
}

public struct ScenarioBeacon: Sendable {
    public var beaconID: String
    public var format: String
    public var identifiers: [String]
    public var address: BluetoothAddress
    public var name: String?
    /// Measured power at 1 m the beacon transmits (nil: the radio's default, not transmitted).
    public var measuredPower: Int?
    /// Advertisements per second.
    public var rate: Double
    /// Fraction of advertisements lost (0...1).
    public var loss: Double
    /// Shadowing sigma override, dB (independent model).
    public var sigma: Double?
    /// Constant extra loss, dB (a pocket or bag: about 10). Part of the true mean RSSI the ground truth uses.
    public var attenuation: Double
    public var path: [Waypoint]
    public var dropouts: [Dropout]
    /// Random dropouts: mean seconds between their starts, and their length range.
    public var randomDropouts: (meanInterval: Double, minLength: Double, maxLength: Double)?
    /// This beacon's own away timeout (`away_timeout_s`, as `devices.known[].away_timeout_s` in the YAML).
    public var awayTimeout: Double?
    /// A tag that reports its own motion (`reports_motion`): every report carries the BTHome `moving` flag, true
    /// while its path moves it (`isMoving(at:)`), as an accelerometer tag's would.
    public var reportsMotion = false

    public init(
        beaconID: String, format: String = "ibeacon", identifiers: [String] = [],
        address: BluetoothAddress = BluetoothAddress(rawValue: 0x0C_0000_0001), name: String? = nil,
        measuredPower: Int? = -59, rate: Double = 10, loss: Double = 0.3, sigma: Double? = nil,
        attenuation: Double = 0, path: [Waypoint], dropouts: [Dropout] = [],
        randomDropouts: (meanInterval: Double, minLength: Double, maxLength: Double)? = nil
    ) {
        self.beaconID = beaconID
        self.format = format
        self.identifiers = identifiers
        self.address = address
        self.name = name
        self.measuredPower = measuredPower
        self.rate = rate
        self.loss = loss
        self.sigma = sigma
        self.attenuation = attenuation
        self.path = path
        self.dropouts = dropouts
        self.randomDropouts = randomDropouts
    }

    /// Distance from the gateway at scenario time `time` (at least 0.1 m).
    public func distance(at time: Double) -> Double {
        let (x, y) = position(at: time)
        return max((x * x + y * y).squareRoot(), 0.1)
    }

    /// The index of the part of the path at `time`: 0 before the first waypoint, k while between waypoint k−1
    /// and k (or resting at waypoint k−1 before moving on), `path.count` after the last. The measured radio
    /// holds one posture offset per part.
    public func segment(at time: Double) -> Int {
        var index = 0
        for waypoint in path where time >= waypoint.time { index += 1 }
        return index
    }

    /// Whether the path moves the beacon at `time`: between two waypoints at different places.
    public func isMoving(at time: Double) -> Bool {
        zip(path, path.dropFirst()).contains { a, b in
            time >= a.time && time < b.time && (a.x != b.x || a.y != b.y)
        }
    }

    /// Position (metres, gateway at the origin) at scenario time `time`.
    public func position(at time: Double) -> (x: Double, y: Double) {
        guard let first = path.first else { return (1, 0) }
        var x = first.x
        var y = first.y
        if let last = path.last, time >= last.time {
            x = last.x
            y = last.y
        } else if time > first.time {
            for (a, b) in zip(path, path.dropFirst()) where time >= a.time && time < b.time {
                let span = b.time - a.time
                let f = span > 0 ? (time - a.time) / span : 1
                x = a.x + (b.x - a.x) * f
                y = a.y + (b.y - a.y) * f
                break
            }
        }
        return (x, y)
    }
}
