/// Which rule decides the rooms (issue 43: "where not, the rule does, and the status says which"), for `rooms
/// status`: the same condition as the arbiter's (`RoomArbiter.classifiedRooms`).
extension RoomsStatus {
    /// One line: the fingerprint classifier when it is on (or the fingerprint margin rule, `rule`, when the
    /// classifier is off and it is on) and every room of `gatewayRooms` (gateway -> room, this gateway's zone) and
    /// of `withoutGateway` has a fingerprint naming one of those gateways; otherwise the level rule and why.
    public func decisionLine(
        gatewayRooms: [String: String], withoutGateway: Set<String> = [], classifier: Bool, rule: Bool = false
    ) -> String {
        let rooms = Set(gatewayRooms.values).union(withoutGateway).sorted()
        guard classifier || rule else {
            return "decisions: the level rule (rooms.fingerprint_classifier is off, rooms.fingerprint_rule is off;"
                + " fingerprints are kept and shown)"
        }
        let which = classifier ? "the fingerprint classifier" : "the fingerprint margin rule"
        guard rooms.count >= 2 else { return "decisions: the level rule (\(which) needs two rooms or more)" }
        let untrained = rooms.filter { fingerprints[$0]?.fingerprint.heardByAny(of: gatewayRooms) != true }
        guard untrained.isEmpty else {
            return "decisions: the level rule until every room is trained (not yet: "
                + untrained.joined(separator: ", ") + ")"
        }
        return "decisions: \(which) (every room trained: " + rooms.joined(separator: ", ") + ")"
    }
}
