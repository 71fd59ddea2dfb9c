/// What the tracker knows about one beacon when it emits an event.
public struct BeaconSnapshot: Sendable, Equatable {
    public var beaconID: String
    public var format: String
    public var identifiers: [String]
    public var address: BluetoothAddress
    public var name: String?
    /// Last raw RSSI (dBm), nil if never available.
    public var rssi: Int?
    /// Filtered RSSI (dBm).
    public var smoothedRSSI: Double?
    /// Estimated distance in metres.
    public var distance: Double?
    public var measuredPower: Int?
    /// Reports per second over the recent window.
    public var reportRate: Double
    /// Capture time of the most recent report.
    public var lastSeen: Timestamp
    public var fields: [String: FieldValue]

    public init(
        beaconID: String, format: String, identifiers: [String], address: BluetoothAddress,
        name: String?, rssi: Int?, smoothedRSSI: Double?, distance: Double?, measuredPower: Int?,
        reportRate: Double, lastSeen: Timestamp, fields: [String: FieldValue]
    ) {
        self.beaconID = beaconID
        self.format = format
        self.identifiers = identifiers
        self.address = address
        self.name = name
        self.rssi = rssi
        self.smoothedRSSI = smoothedRSSI
        self.distance = distance
        self.measuredPower = measuredPower
        self.reportRate = reportRate
        self.lastSeen = lastSeen
        self.fields = fields
    }
}

public enum RegionState: String, Sendable, Equatable, Hashable, Codable {
    case unknown, inside, outside
}

public enum PresenceState: String, Sendable, Equatable, Hashable {
    /// `stale`: silent for longer than the away timeout, but not longer than this beacon usually is (a phone
    /// that stops advertising for minutes); still counted present, its regions held.
    case seen, stale, away
}

/// An event out of the tracker / region engine. `time` is always a capture time taken from the reports
/// (or the time passed to `advance(to:)`), never a wall clock read by the core.
public enum EngineEvent: Sendable, Equatable {
    case sighting(SightingEvent)
    case presence(PresenceEvent)
    case region(RegionEvent)
}

public struct SightingEvent: Sendable, Equatable {
    public var time: Timestamp
    public var beacon: BeaconSnapshot
    public init(time: Timestamp, beacon: BeaconSnapshot) {
        self.time = time
        self.beacon = beacon
    }
}

public struct PresenceEvent: Sendable, Equatable {
    public var time: Timestamp
    public var state: PresenceState
    public var beacon: BeaconSnapshot
    /// The beacon's advertising interval as heard (median gap, seconds), once learned.
    public var interval: Double?
    /// The silence after which this beacon turns `away` (its away timeout, lengthened for a beacon that
    /// habitually goes quiet longer), seconds.
    public var awayAfter: Double?
    public init(
        time: Timestamp, state: PresenceState, beacon: BeaconSnapshot, interval: Double? = nil,
        awayAfter: Double? = nil
    ) {
        self.time = time
        self.state = state
        self.beacon = beacon
        self.interval = interval
        self.awayAfter = awayAfter
    }
}

public struct RegionEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable { case enter, exit, state }
    public var kind: Kind
    public var time: Timestamp
    public var region: String
    public var beaconID: String
    public var state: RegionState
    /// When the beacon entered its current state.
    public var since: Timestamp?
    public var beacon: BeaconSnapshot?
    public init(
        kind: Kind, time: Timestamp, region: String, beaconID: String, state: RegionState,
        since: Timestamp?, beacon: BeaconSnapshot?
    ) {
        self.kind = kind
        self.time = time
        self.region = region
        self.beaconID = beaconID
        self.state = state
        self.since = since
        self.beacon = beacon
    }
}
