import Testing

@testable import BeaconModel
@testable import BeaconTracking

/// The region engine deciding by taught links (issue 43): a taught boundary replaces the configured level for
/// that pair only, a forget restores the configured one, a learned reference power moves distances.
@Suite struct TaughtRegionEngineTests {
    typealias F = EngineFixtures
    static let boundary = TaughtLevel(level: -85, spread: 1.5, reports: 30, seconds: 30)

    static func taught(_ link: TaughtRegionLink?, minor: Int = 1, region: String = "hall") -> TaughtTable {
        var table = TaughtTable()
        table.set(link, beaconID: F.id(minor), region: region)
        return table
    }

    @Test func aTaughtBoundaryEntersWhereTheConfiguredLevelWouldNot() throws {
        // The taught levels sit well below -77 however `TaughtRegionLink.levels` places them near the boundary.
        #expect(try #require(TaughtRegionLink(boundary: Self.boundary).levels).enter < -80)
        // -77 dBm is below the configured -70: never inside by the numbers.
        var configured = F.engine()
        let before = F.regionEvents(F.feed(&configured, from: 0, to: 60, rssi: -77))
        #expect(!before.contains { $0.kind == .enter })
        #expect(configured.state(of: F.id(1), in: "hall") == .outside)
        #expect(configured.levels(of: F.id(1), in: "hall")?.enter == -70)

        // Taught at -85 (the installer held it at the boundary and the gateway heard -85 there): -77 is inside.
        var taught = F.engine()
        taught.setTaught(Self.taught(TaughtRegionLink(boundary: Self.boundary)))
        let events = F.regionEvents(F.feed(&taught, from: 0, to: 60, rssi: -77))
        #expect(events.contains { $0.kind == .enter && $0.region == "hall" })
        let levels = try #require(taught.levels(of: F.id(1), in: "hall"))
        // What `TaughtRegionLink.levels` sets (its body may move the levels relative to the boundary).
        let expected = try #require(TaughtRegionLink(boundary: Self.boundary).levels)
        #expect(levels.enter == expected.enter && levels.exit == expected.exit && levels.taught)

        // Another beacon of the same region keeps the configured level.
        _ = F.feed(&taught, minor: 2, from: 60, to: 120, rssi: -77)
        #expect(taught.state(of: F.id(2), in: "hall") == .outside)
        #expect(taught.levels(of: F.id(2), in: "hall")?.taught == false)
    }

    @Test func aTaughtBoundaryKeepsOutWhatTheConfiguredLevelLetsIn() {
        // Taught near the gateway (-60): -65 no longer enters, though it clears the configured -70.
        var engine = F.engine()
        engine.setTaught(
            Self.taught(TaughtRegionLink(boundary: TaughtLevel(level: -60, spread: 1, reports: 30, seconds: 30))))
        let events = F.regionEvents(F.feed(&engine, from: 0, to: 60, rssi: -65))
        #expect(!events.contains { $0.kind == .enter })
    }

    @Test func forgetRestoresTheConfiguredLevel() throws {
        var engine = F.engine()
        engine.setTaught(Self.taught(TaughtRegionLink(boundary: Self.boundary)))
        _ = F.feed(&engine, from: 0, to: 60, rssi: -77)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)

        // Forgotten while inside: the state stays, the next reports are judged by the configured exit (-75).
        engine.setTaught(TaughtTable())
        #expect(engine.taught.isEmpty)
        let events = F.regionEvents(F.feed(&engine, from: 60, to: 200, rssi: -77))
        #expect(events.contains { $0.kind == .exit && $0.region == "hall" })
        let levels = try #require(engine.levels(of: F.id(1), in: "hall"))
        #expect(levels.enter == -70 && levels.exit == -75 && !levels.taught)
    }

    @Test func aReloadKeepsTheTaughtTable() throws {
        var engine = F.engine()
        engine.setTaught(Self.taught(TaughtRegionLink(boundary: Self.boundary)))
        _ = engine.reload(regions: [F.hall], settings: .default, now: F.t0)
        _ = F.feed(&engine, from: 0, to: 60, rssi: -77)
        #expect(engine.state(of: F.id(1), in: "hall") == .inside)
        #expect(try #require(engine.levels(of: F.id(1), in: "hall")).taught)
    }

    @Test func aLearnedReferencePowerMovesDistanceAndDistanceRegions() throws {
        let near = RegionRule(name: "near", match: .iBeacon(uuid: F.uuid), enter: .distance(2))
        var engine = F.engine(regions: [near])
        _ = F.feed(&engine, from: 0, to: 5, rssi: -70)
        let advertised = try #require(engine.snapshot(of: F.id(1), at: F.t0 + 5)?.distance)
        // Held at 1 m the gateway heard -50, not the advertised -59: the device is louder, so farther at -70.
        var table = TaughtTable()
        table.setReferencePower(-50, beaconID: F.id(1))
        engine.setTaught(table)
        _ = F.feed(&engine, from: 5, to: 10, rssi: -70)
        let learned = try #require(engine.snapshot(of: F.id(1), at: F.t0 + 10))
        #expect(learned.measuredPower == -50)
        #expect(try #require(learned.distance) > advertised * 1.5)
        let levels = try #require(engine.levels(of: F.id(1), in: "near"))
        #expect(levels.enter > -59 && !levels.taught)

        // Refused: a level no receiver reports.
        table.setReferencePower(99, beaconID: F.id(1))
        #expect(table.referencePowers.isEmpty)
    }

    /// `taught_like`: the region taught with beacon 1 decides for beacons 2 and 3 too, beacon 3's link moved by the
    /// difference of the learned reference powers; beacon 4's own link wins over the typical one.
    @Test func aRegionTaughtLikeATypicalDeviceAppliesItsLinkToTheOthersShiftedByTheirReferencePowers() throws {
        var hall = F.hall
        hall.taughtLike = F.id(1)
        var engine = F.engine(regions: [hall])
        let typical = TaughtRegionLink(boundary: Self.boundary)
        let expected = try #require(typical.levels)
        var table = Self.taught(typical)
        table.set(
            TaughtRegionLink(boundary: TaughtLevel(level: -60, spread: 1, reports: 30, seconds: 30)),
            beaconID: F.id(4), region: "hall")
        table.setReferencePower(-59, beaconID: F.id(1))
        table.setReferencePower(-55, beaconID: F.id(3))  // 4 dB stronger than the typical one
        engine.setTaught(table)
        // -77 dBm is inside by the typical link (entered near -87), never by the configured -70.
        for minor in [2, 3] { _ = F.feed(&engine, minor: minor, from: 0, to: 60, rssi: -77) }
        _ = F.feed(&engine, minor: 4, from: 0, to: 60, rssi: -65)
        #expect(engine.state(of: F.id(2), in: "hall") == .inside)
        let two = try #require(engine.levels(of: F.id(2), in: "hall"))
        #expect(two.enter == expected.enter && two.exit == expected.exit && two.taught)
        let three = try #require(engine.levels(of: F.id(3), in: "hall"))
        #expect(three.enter == expected.enter + 4 && three.exit == expected.exit + 4 && three.taught)
        // Its own link (taught near the gateway at -60) keeps -65 out.
        #expect(engine.state(of: F.id(4), in: "hall") != .inside)
        #expect(try #require(engine.levels(of: F.id(4), in: "hall")).enter > -65)

        // The typical device forgotten: every device of the kind is back on the configured levels.
        var forgotten = table
        forgotten.set(nil, beaconID: F.id(1), region: "hall")
        engine.setTaught(forgotten)
        _ = F.feed(&engine, minor: 2, from: 60, to: 62, rssi: -77)
        let after = try #require(engine.levels(of: F.id(2), in: "hall"))
        #expect(after.enter == -70 && !after.taught)
    }

    @Test func taughtLikeMustBeADeviceTheRegionCanSelect() {
        var hall = F.hall
        hall.taughtLike = "eddystone-uid:00112233445566778899:a1b2c3d4e5f6"
        #expect(hall.validate(path: "regions[0]").map(\.path) == ["regions[0].taught_like"])
        hall.taughtLike = F.id(9)
        #expect(hall.validate(path: "regions[0]").isEmpty)
        hall.taughtLike = "a/b"
        #expect(hall.validate(path: "regions[0]").map(\.path) == ["regions[0].taught_like"])
    }
}
