import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// A room whose only gateway goes down (Bermuda users' #764): its beacons are `unknown`, not the neighbour that
/// still hears them; an approach to another room still moves them; the gateway's return decides afresh.
@Suite struct RoomDarkGatewayTests {
    typealias Base = RoomArbiterTests
    static let t0 = Base.t0

    /// A tag at rest in room a (a hears it at -60, b at -74), decided.
    static func decidedInA() -> RoomArbiter {
        var arbiter = RoomArbiter(settings: Base.settings)
        _ = Base.feed(&arbiter, from: 0, to: 90) { _ in (-60, -74) }
        return arbiter
    }

    @Test func theBeaconOfADarkRoomIsUnknownAndTheNeighbourDoesNotTakeIt() {
        var arbiter = Self.decidedInA()
        #expect(arbiter.room(of: "tag") == .some("a"))
        let dark = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        #expect(dark == [RoomChange(beaconID: "tag", time: Self.t0 + 90, from: "a", to: "unknown", hadRoom: true)])
        // Ten minutes in which only b hears it, at its usual steady level: without the rule the slow path (and
        // the stale decay of a's evidence) would have moved it to b within seconds.
        let quiet = Base.feed(&arbiter, from: 90, to: 690) { _ in (nil, -74) }
        #expect(quiet.isEmpty, "\(quiet)")
        #expect(arbiter.room(of: "tag") == .some("unknown"))
        #expect(arbiter.states().first?.room == "unknown")
    }

    @Test func withoutTheAnnouncementTheNeighbourTakesItAsBefore() {
        var arbiter = Self.decidedInA()
        let quiet = Base.feed(&arbiter, from: 90, to: 690) { _ in (nil, -74) }
        #expect(quiet.map(\.to) == ["b"], "the rule's control: a silent gateway that never said offline")
    }

    @Test func anApproachToTheNeighbourStillMovesItWhileItsRoomIsDark() {
        var arbiter = Self.decidedInA()
        _ = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        _ = Base.feed(&arbiter, from: 90, to: 200) { _ in (nil, -74) }
        // Walks into b: b rises by 14 dB.
        let walk = Base.feed(&arbiter, from: 200, to: 260) { _ in (nil, -60) }
        #expect(walk.map(\.to) == ["b"])
        #expect(walk.first?.from == "unknown")
        // Held for the slow dwell (10 s) while the room is dark, after the smoothing's rise.
        #expect(walk.first.map { $0.time - Self.t0 - 200 } ?? 99 <= 15)
        // a comes back later: b is no longer dark-room business, nothing changes.
        #expect(arbiter.setOffline([], now: Self.t0 + 260).isEmpty)
        let after = Base.feed(&arbiter, from: 260, to: 320) { _ in (-74, -60) }
        #expect(after.isEmpty && arbiter.room(of: "tag") == .some("b"))
    }

    @Test func theGatewaysReturnDecidesAfreshAtOnce() {
        var arbiter = Self.decidedInA()
        _ = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        _ = Base.feed(&arbiter, from: 90, to: 300) { _ in (nil, -74) }
        #expect(arbiter.setOffline([], now: Self.t0 + 300).isEmpty)
        let back = Base.feed(&arbiter, from: 300, to: 305) { _ in (-60, -74) }
        #expect(back.map(\.to) == ["a"])
        #expect(back.first?.from == "unknown" && back.first?.hadRoom == true)
        #expect(back.first.map { $0.time - Self.t0 - 300 } ?? 99 <= 1)
    }

    @Test func theNeighbourComingBackFromALongBodyBlockDoesNotTakeIt() {
        var arbiter = Self.decidedInA()
        _ = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        _ = Base.feed(&arbiter, from: 90, to: 200) { _ in (nil, -74) }
        // b is blocked for 45 s (its median sinks to the blocked level), then hears the tag as before: its fast
        // level stands 10 dB above its median, but not above its level while the tag was in a.
        let blocked = Base.feed(&arbiter, from: 200, to: 245) { _ in (nil, -84) }
        let after = Base.feed(&arbiter, from: 245, to: 320) { _ in (nil, -74) }
        #expect(blocked.isEmpty && after.isEmpty, "\(blocked + after)")
        #expect(arbiter.room(of: "tag") == .some("unknown"))
    }

    @Test func theGatewaysReturnWaitsForItsFirstReport() {
        var arbiter = Self.decidedInA()
        _ = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        _ = Base.feed(&arbiter, from: 90, to: 300) { _ in (nil, -74) }
        #expect(arbiter.setOffline([], now: Self.t0 + 300).isEmpty)
        // gw-a is online again but its first report comes 6 s later (a restarted gateway's scan): b alone
        // hears the tag meanwhile, which does not make b the room.
        let waiting = Base.feed(&arbiter, from: 300, to: 306) { _ in (nil, -74) }
        #expect(waiting.isEmpty, "\(waiting)")
        #expect(arbiter.room(of: "tag") == .some("unknown"))
        let back = Base.feed(&arbiter, from: 306, to: 312) { _ in (-60, -74) }
        #expect(back.map(\.to) == ["a"])
        #expect(back.first?.from == "unknown")
    }

    @Test func aBeaconThatLeftDuringTheOutageIsDecidedWithoutTheReturningGatewaysReport() {
        var arbiter = Self.decidedInA()
        _ = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        _ = Base.feed(&arbiter, from: 90, to: 300) { _ in (nil, -74) }
        _ = arbiter.setOffline([], now: Self.t0 + 300)
        // gw-a never hears it again: after evidenceMaxAge the best room it has is taken.
        let later = Base.feed(&arbiter, from: 300, to: 300 + Int(Base.settings.evidenceMaxAge) + 3) { _ in (nil, -74) }
        #expect(later.map(\.to) == ["b"])
        #expect(later.first.map { $0.time - Self.t0 - 300 } ?? 0 >= Base.settings.evidenceMaxAge)
    }

    @Test func aRoomWithAnotherGatewayStillOnlineIsNotDark() {
        var settings = Base.settings
        settings.gatewayRooms["gw-a2"] = "a"
        var arbiter = RoomArbiter(settings: settings)
        _ = Base.feed(&arbiter, from: 0, to: 90) { _ in (-60, -74) }
        #expect(arbiter.setOffline(["gw-a"], now: Self.t0 + 90).isEmpty)
        #expect(arbiter.room(of: "tag") == .some("a"))
    }

    @Test func nobodyHearingItStillTurnsItNotHome() {
        var arbiter = Self.decidedInA()
        _ = arbiter.setOffline(["gw-a"], now: Self.t0 + 90)
        let gone = Base.feed(&arbiter, from: 90, to: 90 + Int(Base.settings.awayTimeout) + 5) { _ in (nil, nil) }
        #expect(gone.map(\.to) == [nil])
        #expect(gone.first?.from == "unknown")
    }

    @Test func aRoomCannotBeNamedUnknown() {
        var rooms = RoomSettings()
        rooms.gateways = ["gw-a": "unknown"]
        #expect(rooms.validate(gateway: GatewaySettings(id: "gw-a")).contains { $0.message.contains("reserved") })
    }
}
