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
}
