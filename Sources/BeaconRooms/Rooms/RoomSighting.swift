import BeaconModel

/// One gateway's report of one beacon, as the room arbiter sees it: what a gateway's `sighting` event carries
/// (docs/mqtt.md): its capture time, the smoothed RSSI (or the raw one when the gateway has none), the
/// estimated distance and the report rate.
public struct RoomSighting: Sendable, Equatable {
    public var gatewayID: String
    public var beaconID: String
    /// Capture time at the gateway (seconds since 1970).
    public var time: Timestamp
    /// dBm as the gateway measured it (before the arbiter's per-gateway offset).
    public var rssi: Double
    /// The last raw report's RSSI (dBm), when the sighting carries one.
    public var rawRSSI: Double?
    public var distance: Double?
    public var reportRate: Double

    public init(
        gatewayID: String, beaconID: String, time: Timestamp, rssi: Double, rawRSSI: Double? = nil,
        distance: Double? = nil, reportRate: Double = 0
    ) {
        self.gatewayID = gatewayID
        self.beaconID = beaconID
        self.time = time
        self.rssi = rssi
        self.rawRSSI = rawRSSI
        self.distance = distance
        self.reportRate = reportRate
    }

    /// The sighting a gateway's engine emitted; nil when it carries no RSSI at all.
    public init?(gatewayID: String, event: SightingEvent) {
        guard let rssi = event.beacon.smoothedRSSI ?? event.beacon.rssi.map(Double.init), rssi.isFinite else {
            return nil
        }
        self.init(
            gatewayID: gatewayID, beaconID: event.beacon.beaconID, time: event.time, rssi: rssi,
            rawRSSI: event.beacon.rssi.map(Double.init), distance: event.beacon.distance,
            reportRate: event.beacon.reportRate)
    }
}

/// A room decision about one beacon: where it is now. `room` nil means `not_home` (heard by no gateway for the
/// away timeout).
public struct RoomChange: Sendable, Equatable {
    public var beaconID: String
    public var time: Timestamp
    public var from: String?
    public var to: String?
    /// Whether `from` is a decision (false for a beacon's first decision since the arbiter started or restored).
    public var hadRoom: Bool
    /// The winning room's lead over the former room when the change was made, dB (nil for not_home or a first
    /// decision).
    public var lead: Double?
    /// The gateway whose evidence won.
    public var gatewayID: String?

    public init(
        beaconID: String, time: Timestamp, from: String?, to: String?, hadRoom: Bool, lead: Double? = nil,
        gatewayID: String? = nil
    ) {
        self.beaconID = beaconID
        self.time = time
        self.from = from
        self.to = to
        self.hadRoom = hadRoom
        self.lead = lead
        self.gatewayID = gatewayID
    }
}

/// A persisted room decision (restored by a restarted or newly elected arbiter, or rebuilt from the retained
/// room states on the broker).
public struct PersistedRoomState: Sendable, Equatable {
    public var beaconID: String
    /// nil: `not_home`.
    public var room: String?
    /// When the beacon entered this room (or went away).
    public var since: Timestamp
    /// When the decision was last confirmed (evidence of this room, or the away decision's time).
    public var updated: Timestamp

    public init(beaconID: String, room: String?, since: Timestamp, updated: Timestamp) {
        self.beaconID = beaconID
        self.room = room
        self.since = since
        self.updated = updated
    }
}
