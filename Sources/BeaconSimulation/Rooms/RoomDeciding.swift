import BeaconModel
import BeaconRooms

/// Anything that turns gateways' sightings into one room per beacon: the arbiter, and the peer baselines the
/// simulator compares it with on the same streams.
public protocol RoomDeciding {
    var name: String { get }
    mutating func process(_ sighting: RoomSighting) -> [RoomChange]
    mutating func advance(to now: Timestamp) -> [RoomChange]
    /// `.some(nil)` for `not_home`, nil before the first decision.
    func room(of beaconID: String) -> String??
    /// The gateways announced offline from `now` on (each one's MQTT last will; an `online` takes it out).
    /// BeaconBridge's rules act on it (`RoomArbiter.setOffline`); the peers' have no such notion and only stop
    /// hearing the gateway (the default: nothing).
    mutating func gatewaysOffline(_ gateways: Set<String>, now: Timestamp) -> [RoomChange]
}

extension RoomDeciding {
    public mutating func gatewaysOffline(_ gateways: Set<String>, now: Timestamp) -> [RoomChange] { [] }
}

extension RoomArbiter: RoomDeciding {
    public var name: String { "beaconbridge" }

    public mutating func gatewaysOffline(_ gateways: Set<String>, now: Timestamp) -> [RoomChange] {
        setOffline(gateways, now: now)
    }
}

/// The two peer rules users run today, on distances (the arbiter's per-gateway offsets applied to them too, as
/// Bermuda's per-scanner offset and ESPresense's per-node `rx_adj_rssi` allow, so calibration is not what differs):
/// - `nearest`: Home Assistant's `mqtt_room`: a report moves the beacon to its room when it is the current room,
///   or its distance is smaller than the current one, or the current one is older than `timeout` (5 s, the
///   component's default); `not_home` after the away timeout (the component's default 0 would never go away; the
///   arbiter's is used so the comparison is fair).
/// - `distance-margin`: Bermuda: the nearest gateway, where a challenger wins only when its distance is at
///   least 30 % below the incumbent's, or the incumbent has not been heard for `timeout`; `not_home` after the
///   away timeout.
public struct RoomBaseline: RoomDeciding, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case nearest
        case distanceMargin = "distance-margin"
    }

    public let kind: Kind
    public var name: String { kind.rawValue }
    let settings: RoomArbiterSettings
    let pathLossExponent: Double
    let timeout: Double
    let marginFraction: Double

    struct Track: Sendable {
        var room: String?? = nil
        var distance = Double.infinity
        var updated: Timestamp = -.infinity
        var lastHeard: Timestamp = -.infinity
        /// Latest distance and time per room (distance-margin).
        var latest: [String: (distance: Double, time: Timestamp)] = [:]
    }
    var tracks: [String: Track] = [:]

    public init(
        _ kind: Kind, settings: RoomArbiterSettings, pathLossExponent: Double = 2.7,
        timeout: Double? = nil, marginFraction: Double = 0.3
    ) {
        self.kind = kind
        self.settings = settings
        self.pathLossExponent = pathLossExponent
        self.timeout = timeout ?? (kind == .nearest ? 5 : 10)
        self.marginFraction = marginFraction
    }

    public func room(of beaconID: String) -> String?? { tracks[beaconID]?.room }

    /// The sighting's distance with the gateway's receiver offset taken out (d·10^(offset/(10·n))).
    func calibratedDistance(_ sighting: RoomSighting) -> Double? {
        guard let distance = sighting.distance, distance.isFinite, distance > 0 else { return nil }
        let offset = settings.receiverOffsets[sighting.gatewayID] ?? 0
        return distance * ElementaryMath.pow10(offset / (10 * pathLossExponent))
    }

    public mutating func process(_ sighting: RoomSighting) -> [RoomChange] {
        guard let room = settings.gatewayRooms[sighting.gatewayID], let distance = calibratedDistance(sighting) else {
            return []
        }
        let now = sighting.time
        var track = tracks[sighting.beaconID] ?? Track()
        defer { tracks[sighting.beaconID] = track }
        track.lastHeard = max(track.lastHeard, now)
        let current: String? = track.room.flatMap { $0 }
        func move() -> [RoomChange] {
            let from = track.room
            track.room = .some(room)
            track.distance = distance
            track.updated = now
            guard current != room else { return [] }
            return [
                RoomChange(
                    beaconID: sighting.beaconID, time: now, from: current, to: room, hadRoom: from != nil,
                    gatewayID: sighting.gatewayID)
            ]
        }
        switch kind {
        case .nearest:
            guard let current else { return move() }
            if room == current || distance < track.distance || now - track.updated >= timeout { return move() }
            return []
        case .distanceMargin:
            track.latest[room] = (distance, now)
            guard let current else { return move() }
            if room == current {
                track.distance = distance
                track.updated = now
                return []
            }
            guard let incumbent = track.latest[current], now - incumbent.time < timeout else { return move() }
            // The challenger must be the nearest fresh room and 30 % nearer than the incumbent.
            let nearest = track.latest.filter { now - $0.value.time < timeout }.min {
                $0.value.distance < $1.value.distance
            }
            guard nearest?.key == room, distance <= (1 - marginFraction) * incumbent.distance else { return [] }
            return move()
        }
    }

    public mutating func advance(to now: Timestamp) -> [RoomChange] {
        var changes: [RoomChange] = []
        for id in tracks.keys.sorted() {
            guard var track = tracks[id], case let .some(.some(current)) = track.room,
                now - track.lastHeard >= settings.awayTimeout
            else { continue }
            track.room = .some(nil)
            track.latest = [:]
            track.distance = .infinity
            tracks[id] = track
            changes.append(RoomChange(beaconID: id, time: now, from: current, to: nil, hadRoom: true))
        }
        return changes
    }
}
