import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// Stationary reference tags as a continuous check of the room decisions (docs/rooms.md, "Reference tags").
@Suite struct RoomReferenceCheckTests {
    static let t0: Timestamp = 1_700_000_000

    @Test func secondsAreTalliedRightUnknownOrWrongAndTurnsAreNoticed() {
        var check = RoomReferenceCheck(tags: ["shelf": "kitchen"])
        var decided: String?? = nil
        // Undecided for 3 s: nothing counts.
        for second in 0..<3 { check.observe(now: Self.t0 + Double(second)) { _ in decided } }
        #expect(check.rightSeconds == 0 && check.takeNotices().isEmpty)
        decided = .some("kitchen")
        for second in 3..<13 { check.observe(now: Self.t0 + Double(second)) { _ in decided } }
        decided = .some("hall")
        for second in 13..<18 { check.observe(now: Self.t0 + Double(second)) { _ in decided } }
        decided = .some(RoomArbiter.unknownRoom)
        for second in 18..<20 { check.observe(now: Self.t0 + Double(second)) { _ in decided } }
        decided = .some(nil)
        check.observe(now: Self.t0 + 20) { _ in decided }
        // A stopped process does not add its whole gap (at most 5 s per tick).
        decided = .some("kitchen")
        check.observe(now: Self.t0 + 3600) { _ in decided }
        #expect(check.rightSeconds == 10 + 5)
        #expect(check.wrongSeconds == 5 + 1)
        #expect(check.unknownSeconds == 2)
        #expect(check.wrongNow == 0)
        let notices = check.takeNotices()
        #expect(notices.map(\.decided) == ["hall", "unknown", "not_home", "kitchen"])
        #expect(notices.map(\.wrong) == [true, false, true, false])
        #expect(check.takeNotices().isEmpty)
    }

    @Test func theCoordinatorTicksItsTagsWithTheArbitersDecisions() throws {
        // gw-c (gw-a would drop its own sightings echoed by the broker: they come from its engine).
        var coordinator = RoomCoordinatorTests.coordinator("gw-c")
        coordinator.setReferenceTags(["tag": "b"])
        _ = RoomCoordinatorTests.online(&coordinator, ["gw-a", "gw-b", "gw-c"])
        // The tag is loudest at gw-a: placed in a, not in its declared b.
        for second in 1...20 {
            let time = Self.t0 + Double(second)
            _ = coordinator.receive(try RoomCoordinatorTests.sighting("gw-a", rssi: -50, at: time), wall: 10)
            _ = coordinator.receive(try RoomCoordinatorTests.sighting("gw-b", rssi: -80, at: time), wall: 10)
            _ = coordinator.advance(to: time, wall: 10)
        }
        #expect(coordinator.arbiter.room(of: "tag") == .some("a"))
        #expect(coordinator.references.wrongNow == 1)
        #expect(coordinator.references.wrongSeconds >= 15)
        #expect(coordinator.takeReferenceNotices().map(\.decided) == ["a"])
        // The same tags again keep the tallies; new ones start afresh.
        coordinator.setReferenceTags(["tag": "b"])
        #expect(coordinator.references.wrongNow == 1)
        coordinator.setReferenceTags(["tag": "a"])
        #expect(coordinator.references.wrongSeconds == 0)
    }
}
