import BeaconModel
import BeaconRooms

extension RoomScenario {
    /// A gateway down for a while (issue 29; the file's `outages`, docs/rooms.md "Gateway outages"): from `from`
    /// to `to` (scenario seconds, `to` excluded) it hears nothing, its identity beacon is silent, and it publishes
    /// nothing; it is announced offline at `from` (its MQTT last will) and online again at `to`, when it starts
    /// afresh (a new tracker).
    public struct Outage: Sendable, Equatable {
        public var gateway: String
        public var from: Double
        public var to: Double

        public init(gateway: String, from: Double, to: Double) {
            self.gateway = gateway
            self.from = from
            self.to = to
        }
    }

    /// Whether gateway `id` is down at capture time `time`.
    public func isDown(_ id: String, at time: Timestamp) -> Bool {
        outages.contains { $0.gateway == id && time >= startTime + $0.from && time < startTime + $0.to }
    }

    /// The rooms all of whose gateways are down at capture time `time` (a room without gateways is never dark),
    /// as `RoomArbiter.setOffline` judges them.
    public func darkRooms(at time: Timestamp) -> Set<String> {
        guard !outages.isEmpty else { return [] }
        return RoomArbiter.darkRooms(
            gatewayRooms: Dictionary(plan.gateways.map { ($0.id, $0.room) }, uniquingKeysWith: { first, _ in first }),
            offline: Set(plan.gateways.map(\.id).filter { isDown($0, at: time) }))
    }

    /// What BeaconBridge's rules are told (each gateway's availability, as the broker delivers a last will and
    /// an `online`): at every start and end of an outage, in time order, the gateways offline from then on.
    public var offlineAnnouncements: [(time: Timestamp, gateways: Set<String>)] {
        let times = Set(outages.flatMap { [startTime + $0.from, startTime + $0.to] }).sorted()
        return times.map { time in (time, Set(outages.map(\.gateway).filter { isDown($0, at: time) })) }
    }

    /// Observations of gateway `id` with those made while it is down left out.
    func heard(_ observations: [Observation], by id: String) -> [Observation] {
        guard outages.contains(where: { $0.gateway == id }) else { return observations }
        return observations.filter { !isDown(id, at: $0.timestamp) }
    }

    /// The file's `outages` list: every entry names a gateway of the plan, 0 <= `from_s` < `to_s` <=
    /// `duration_s`, and one gateway's outages do not overlap. Errors name `outages[i].key`.
    static func outages(_ values: [JSONValue], plan: FloorPlan, duration: Double) throws(ScenarioError) -> [Outage] {
        var result: [Outage] = []
        for (index, value) in values.enumerated() {
            var fields = try ScenarioFields(value, path: "outages[\(index)]")
            guard let gateway = try fields.string("gateway") else {
                throw ScenarioError(path: fields.keyPath("gateway"), message: "required, a gateway id")
            }
            guard let from = try fields.double("from_s") else {
                throw ScenarioError(path: fields.keyPath("from_s"), message: "required, scenario seconds")
            }
            guard let to = try fields.double("to_s") else {
                throw ScenarioError(path: fields.keyPath("to_s"), message: "required, scenario seconds")
            }
            try fields.finish()
            guard plan.gateways.contains(where: { $0.id == gateway }) else {
                throw ScenarioError(
                    kind: .invalid, path: fields.keyPath("gateway"),
                    message: "no gateway `\(gateway)` in the floor plan")
            }
            guard from >= 0, from.isFinite else {
                throw ScenarioError(kind: .invalid, path: fields.keyPath("from_s"), message: "must be >= 0 seconds")
            }
            guard to > from else {
                throw ScenarioError(kind: .invalid, path: fields.keyPath("to_s"), message: "must be after from_s")
            }
            guard to <= duration else {
                throw ScenarioError(kind: .invalid, path: fields.keyPath("to_s"), message: "must be <= duration_s")
            }
            if let other = result.firstIndex(where: { $0.gateway == gateway && $0.from < to && from < $0.to }) {
                throw ScenarioError(
                    kind: .invalid, path: fields.path,
                    message: "overlaps outages[\(other)] of the same gateway `\(gateway)`")
            }
            result.append(Outage(gateway: gateway, from: from, to: to))
        }
        return result
    }
}
