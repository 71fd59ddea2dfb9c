import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// The room arbiter's rules on hand-made sighting streams (docs/rooms.md).
@Suite struct RoomArbiterTests {
    static let t0: Timestamp = 1_700_000_000
    static let settings = RoomArbiterSettings(gatewayRooms: ["gw-a": "a", "gw-b": "b"])

    /// Feeds both gateways once a second from `from` to `to` (scenario seconds) with the levels `levels(t)` gives,
    /// ticking every second; returns the changes.
    static func feed(
        _ arbiter: inout RoomArbiter, from: Int, to: Int,
        levels: (Int) -> (a: Double?, b: Double?)
    ) -> [RoomChange] {
        var changes: [RoomChange] = []
        for second in from..<to {
            let time = t0 + Double(second)
            let (a, b) = levels(second)
            if let a {
                changes += arbiter.process(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: time, rssi: a))
            }
            if let b {
                changes += arbiter.process(RoomSighting(gatewayID: "gw-b", beaconID: "tag", time: time + 0.5, rssi: b))
            }
            changes += arbiter.advance(to: time + 0.9)
        }
        return changes
    }

    @Test func firstDecisionAfterSettleThenAWalkIntoTheOtherRoomSwitchesOnce() {
        var arbiter = RoomArbiter(settings: Self.settings)
        let start = Self.feed(&arbiter, from: 0, to: 60) { _ in (-60, -78) }
        #expect(start.count == 1)
        #expect(start.first?.to == "a" && start.first?.hadRoom == false)
        // Walks into b: b rises by 15 dB, a falls by 15 dB.
        let walk = Self.feed(&arbiter, from: 60, to: 180) { _ in (-75, -63) }
        #expect(walk.map(\.to) == ["b"])
        #expect(walk.first.map { $0.time - Self.t0 - 60 } ?? 99 <= 12)
        #expect(walk.first?.from == "a" && walk.first?.hadRoom == true)
        #expect(arbiter.room(of: "tag") == .some("b"))
    }

    @Test func aBodyBlockingTheCurrentRoomForThirtySecondsIsNoSwitch() {
        var arbiter = RoomArbiter(settings: Self.settings)
        _ = Self.feed(&arbiter, from: 0, to: 120) { _ in (-66, -72) }
        // The current room's link loses 14 dB for 30 s; the other room's signal does not change (no rise).
        let blocked = Self.feed(&arbiter, from: 120, to: 150) { _ in (-80, -72) }
        let after = Self.feed(&arbiter, from: 150, to: 200) { _ in (-66, -72) }
        #expect(blocked.isEmpty)
        #expect(after.isEmpty)
        #expect(arbiter.room(of: "tag") == .some("a"))
    }

    @Test func aLastingLeadOfTheOtherRoomWinsOnTheSlowPath() {
        var arbiter = RoomArbiter(settings: Self.settings)
        _ = Self.feed(&arbiter, from: 0, to: 120) { _ in (-66, -70) }
        // The other room ends up 5 dB ahead without ever rising by `rise` (a slow drift): the medians decide.
        let drift = Self.feed(&arbiter, from: 120, to: 300) { second in
            let shift = min(Double(second - 120) / 30, 1) * 9
            return (-66 - shift, -70)
        }
        #expect(drift.map(\.to) == ["b"])
    }

    @Test func silenceForTheAwayTimeoutIsNotHomeAndAReturnIsARoomAgain() throws {
        var arbiter = RoomArbiter(settings: Self.settings)
        _ = Self.feed(&arbiter, from: 0, to: 30) { _ in (-60, -80) }
        let silent = Self.feed(&arbiter, from: 30, to: 100) { _ in (nil, nil) }
        let away = try #require(silent.first)
        #expect(silent.count == 1)
        #expect(away.to == nil && away.from == "a")
        #expect(away.time - Self.t0 >= 29 + 60 - 1)
        #expect(arbiter.room(of: "tag") == .some(nil))
        let back = Self.feed(&arbiter, from: 100, to: 120) { _ in (-80, -60) }
        #expect(back.map(\.to) == ["b"])
        #expect(back.first?.hadRoom == true)
    }

    @Test func aRestoredRoomIsNotAnnouncedAgain() {
        let rows = [PersistedRoomState(beaconID: "tag", room: "a", since: Self.t0 - 500, updated: Self.t0 - 5)]
        var arbiter = RoomArbiter(settings: Self.settings, restoring: rows, now: Self.t0)
        #expect(arbiter.room(of: "tag") == .some("a"))
        let changes = Self.feed(&arbiter, from: 0, to: 60) { _ in (-60, -75) }
        #expect(changes.isEmpty)
        // Too old a row is not restored.
        let stale = RoomArbiter(
            settings: Self.settings,
            restoring: [
                PersistedRoomState(
                    beaconID: "tag", room: "a", since: Self.t0 - 5_000, updated: Self.t0 - 1_000)
            ], now: Self.t0)
        #expect(stale.room(of: "tag") == nil)
    }

    @Test func theReceiverOffsetCalibratesAHotGateway() {
        // gw-b reads 10 dB louder than the reference: uncalibrated it looks nearer, calibrated it is not.
        var plain = RoomArbiter(settings: Self.settings)
        var settings = Self.settings
        settings.receiverOffsets = ["gw-b": 10]
        var calibrated = RoomArbiter(settings: settings)
        _ = Self.feed(&plain, from: 0, to: 60) { _ in (-64, -60) }
        _ = Self.feed(&calibrated, from: 0, to: 60) { _ in (-64, -60) }
        #expect(plain.room(of: "tag") == .some("b"))
        #expect(calibrated.room(of: "tag") == .some("a"))
    }

    @Test func unknownGatewaysOutOfOrderAndNonFiniteSightingsAreIgnored() {
        var arbiter = RoomArbiter(settings: Self.settings)
        #expect(arbiter.process(RoomSighting(gatewayID: "gw-x", beaconID: "tag", time: Self.t0, rssi: -50)).isEmpty)
        #expect(arbiter.process(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: Self.t0, rssi: .nan)).isEmpty)
        #expect(arbiter.process(RoomSighting(gatewayID: "gw-a", beaconID: "tag", time: .infinity, rssi: -50)).isEmpty)
        #expect(arbiter.advance(to: .nan).isEmpty)
        #expect(arbiter.room(of: "tag") == nil)
    }

    @Test func stateChangesAreTakenOnce() {
        var arbiter = RoomArbiter(settings: Self.settings)
        _ = Self.feed(&arbiter, from: 0, to: 10) { _ in (-60, -80) }
        let rows = arbiter.takeStateChanges()
        #expect(rows.map(\.room) == [.some("a")])
        #expect(arbiter.takeStateChanges().isEmpty)
        #expect(arbiter.states().count == 1)
    }

    @Test func settingsOutOfRangeAreNamed() {
        var settings = Self.settings
        settings.margin = -1
        settings.receiverOffsets = ["gw-a": 99]
        let paths = settings.validate(path: "rooms").map(\.path)
        #expect(paths.contains("rooms.margin_db"))
        #expect(paths.contains("rooms.receiver_offsets_db.gw-a"))
        #expect(Self.settings.validate(path: "rooms").isEmpty)
    }
}
