import Testing

@testable import BeaconRooms

/// The coordinator's view of the broker connection when the daemon's view lags behind the messages (the
/// publisher's connection state is copied after its whole step, while inbound messages are delivered at once):
/// its own `online` coming back is the proof of a connection, one per connection.
@Suite struct RoomConnectionTests {
    typealias Support = RoomCoordinatorTests
    static let t0 = Support.t0

    static func republished(_ effects: [RoomCoordinator.Effect]) -> [RoomEvent] {
        effects.flatMap { effect -> [RoomEvent] in if case let .republish(events) = effect { events } else { [] } }
    }

    @Test func itsOwnOnlineBeforeTheConnectionIsReportedStillLeadsOnceSettled() {
        var a = Support.coordinator("gw-a")
        // The birth comes back before the daemon saw the publisher connected (seen once under a loaded suite:
        // the gateway never led).
        _ = a.receive(Support.availability("gw-a", "online"), wall: 0)
        _ = a.connection(true, number: 1, wall: 0.5)
        #expect(a.advance(to: Self.t0, wall: 3) == [.leadership(isLeader: true, leader: "gw-a")])
    }

    @Test func aReconnectTheDaemonDidNotSeeGoDownIsATakeoverWithTheStatesAgain() throws {
        var a = Support.coordinator("gw-a")
        _ = Support.online(&a, ["gw-a"])
        #expect(a.isLeader)
        _ = a.receive(try Support.state("gw-a", room: "a", decision: 3, at: Self.t0 - 5), wall: 11)
        // The broker restarted and the publisher reconnected between two looks: only a second birth shows it.
        #expect(
            a.receive(Support.availability("gw-a", "online"), wall: 20) == [
                .leadership(isLeader: false, leader: "gw-a")
            ])
        // A stale "down" read about the first connection, after the second one's birth: ignored.
        #expect(a.connection(false, number: 1, wall: 20.5).isEmpty)
        let back = a.advance(to: Self.t0 + 1, wall: 23)
        #expect(back.first == .leadership(isLeader: true, leader: "gw-a"))
        #expect(Self.republished(back).map(\.decision) == [3])
        #expect(Support.published(back).isEmpty)
        // A "down" about the current connection is a loss.
        #expect(a.connection(false, number: 2, wall: 24) == [.leadership(isLeader: false, leader: nil)])
    }
}
