import BeaconCore

/// An oracle row of the rooms table as a `RoomDeciding`, so it is scored exactly like the rules: at every tick it
/// shows `RoomOracle`'s room of its kind for that second, with no hysteresis. Sightings are ignored: the oracle
/// reads the simulator's hidden state. Analysis only, never a deployable rule.
public struct RoomOracleRule: RoomDeciding, Sendable {
    public let kind: RoomOracle.Kind
    public var name: String { kind.name }
    let oracle: RoomOracle
    var rooms: [String: String?] = [:]

    public init(_ kind: RoomOracle.Kind, oracle: RoomOracle) {
        self.kind = kind
        self.oracle = oracle
    }

    public func room(of beaconID: String) -> String?? { rooms[beaconID] }

    public mutating func process(_ sighting: RoomSighting) -> [RoomChange] { [] }

    public mutating func advance(to now: Timestamp) -> [RoomChange] {
        guard now.isFinite else { return [] }
        let second = Int((now - oracle.scenario.startTime).rounded())
        var changes: [RoomChange] = []
        for (index, person) in oracle.scenario.people.enumerated() {
            let room = oracle.room(kind, person: index, second: second)
            let previous = rooms[person.beaconID]
            guard previous != .some(room) else { continue }
            rooms[person.beaconID] = .some(room)
            changes.append(
                RoomChange(
                    beaconID: person.beaconID, time: now, from: previous.flatMap { $0 }, to: room,
                    hadRoom: previous != nil))
        }
        return changes
    }
}
