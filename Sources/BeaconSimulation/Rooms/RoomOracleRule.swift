import BeaconModel
import BeaconRooms

/// An oracle row of the rooms table as a `RoomDeciding`, so it is scored exactly like the rules: at every tick it
/// shows an oracle's room for that second, with no hysteresis. Sightings are ignored: the oracle reads the
/// simulator's hidden state. Analysis only, never a deployable rule.
public struct RoomOracleRule: RoomDeciding, Sendable {
    public let name: String
    let scenario: RoomScenario
    /// The room shown for (person index, whole scenario second); nil is `not_home`.
    let roomAt: @Sendable (Int, Int) -> String?
    var rooms: [String: String?] = [:]

    /// `RoomOracle`'s room of `kind`.
    public init(_ kind: RoomOracle.Kind, oracle: RoomOracle) {
        self.init(name: kind.name, scenario: oracle.scenario) { oracle.room(kind, person: $0, second: $1) }
    }

    /// A fingerprint oracle's room (`RoomFingerprintOracle`).
    public init(_ match: RoomFingerprintOracle.Match, oracle: RoomFingerprintOracle) {
        self.init(name: oracle.name(match), scenario: oracle.oracle.scenario) {
            oracle.room(match, person: $0, second: $1)
        }
    }

    init(name: String, scenario: RoomScenario, roomAt: @escaping @Sendable (Int, Int) -> String?) {
        self.name = name
        self.scenario = scenario
        self.roomAt = roomAt
    }

    public func room(of beaconID: String) -> String?? { rooms[beaconID] }

    public mutating func process(_ sighting: RoomSighting) -> [RoomChange] { [] }

    public mutating func advance(to now: Timestamp) -> [RoomChange] {
        guard now.isFinite else { return [] }
        let second = Int((now - scenario.startTime).rounded())
        var changes: [RoomChange] = []
        for (index, person) in scenario.people.enumerated() {
            let room = roomAt(index, second)
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
