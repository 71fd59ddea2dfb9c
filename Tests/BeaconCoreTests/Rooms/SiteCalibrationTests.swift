import BeaconSimulation
import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// Self-calibration inside the coordinator (docs/rooms.md, "Self-calibration"): identity beacons recognised and
/// kept out of the room evidence, the solve feeding the arbiter's offsets, the leader's published calibration
/// restored by the others, and hostile input refused.
@Suite struct SiteCalibrationTests {
    static let t0 = RoomCoordinatorTests.t0
    static let topics = RoomCoordinatorTests.topics
    static let ids = ["gw-a", "gw-b", "gw-c"]
    /// The receivers' true offsets (dB, louder positive); transmitters all alike.
    static let truth: [String: Double] = ["gw-a": 6, "gw-b": 0, "gw-c": -6]
    /// Reciprocal path levels between the gateways.
    static let path: [Set<String>: Double] = [["gw-a", "gw-b"]: -70, ["gw-a", "gw-c"]: -82, ["gw-b", "gw-c"]: -74]

    static func coordinator(
        _ id: String, hand: [String: Double] = [:], mode: CalibrationSettings.HandOffsets = .override,
        enabled: Bool = true
    ) -> RoomCoordinator {
        var settings = RoomCoordinatorTests.settings
        settings.receiverOffsets = hand
        var calibration = CalibrationSettings()
        calibration.handOffsets = mode
        calibration.enabled = enabled
        return RoomCoordinator(
            gatewayID: id, topics: topics, settings: settings, leaderSettle: 2, calibration: calibration)
    }

    static func identity(_ gateway: String) -> String { CalibrationSettings().beaconID(of: gateway) }

    /// What receiver `i` hears of transmitter `j`'s identity beacon at step `step` (whole dB, seeded noise).
    static func level(_ i: String, _ j: String, draws: inout SimulationRandom) -> Int {
        Int(((path[[i, j]] ?? -90) + (truth[i] ?? 0) + 3 * draws.gaussian()).rounded())
    }

    /// `seconds` of every gateway hearing every other's identity beacon once a second, as `me` receives it: its
    /// own reports from its engine, the others' from the broker.
    static func feedIdentities(
        _ coordinator: inout RoomCoordinator, me: String, from start: Timestamp, seconds: Int, seed: UInt64 = 7
    ) throws {
        var draws = SimulationRandom(seed: seed)
        for second in 0..<seconds {
            let time = start + Double(second)
            for i in ids {
                for j in ids where i != j {
                    let rssi = level(i, j, draws: &draws)
                    if i == me {
                        _ = coordinator.ownSighting(
                            RoomSighting(
                                gatewayID: i, beaconID: identity(j), time: time, rssi: Double(rssi),
                                rawRSSI: Double(rssi)))
                    } else {
                        _ = coordinator.receive(
                            try RoomCoordinatorTests.sighting(i, rssi: rssi, at: time, beacon: identity(j)), wall: 0)
                    }
                }
            }
            _ = coordinator.advance(to: time, wall: 0)
        }
    }

    static func centred(_ offsets: [String: Double]) -> [String: Double] {
        let mean = ids.reduce(0) { $0 + (offsets[$1] ?? 0) } / Double(ids.count)
        return Dictionary(uniqueKeysWithValues: ids.map { ($0, (offsets[$0] ?? 0) - mean) })
    }

    @Test func identityBeaconsAreRecognisedAndNeverRoomEvidence() throws {
        var coordinator = Self.coordinator("gw-b")
        try Self.feedIdentities(&coordinator, me: "gw-b", from: Self.t0, seconds: 30)
        #expect(coordinator.trackedBeacons == 0)
        #expect(coordinator.counters.identitySightings == 30 * 6)
        #expect(coordinator.counters.decisions == 0)
        #expect(coordinator.calibration?.recorded == 30 * 6)
        #expect(coordinator.calibration?.gateway(identifiedBy: Self.identity("gw-c")) == "gw-c")
        #expect(coordinator.calibration?.gateway(identifiedBy: "ibeacon:\(CalibrationSettings.defaultUUID):1:2") == nil)
        // Off: still recognised (never room evidence), not solved.
        var off = Self.coordinator("gw-b", enabled: false)
        try Self.feedIdentities(&off, me: "gw-b", from: Self.t0, seconds: 30)
        #expect(off.trackedBeacons == 0 && off.counters.calibrationSolves == 0)
        #expect(off.arbiter.settings.receiverOffsets.isEmpty)
    }

    @Test func theSolveFeedsTheArbiter() throws {
        var coordinator = Self.coordinator("gw-b")
        try Self.feedIdentities(&coordinator, me: "gw-b", from: Self.t0, seconds: 120)
        #expect(coordinator.counters.calibrationSolves >= 11)
        let used = Self.centred(coordinator.arbiter.settings.receiverOffsets)
        let truth = Self.centred(Self.truth)
        for id in Self.ids {
            #expect(abs((used[id] ?? 99) - (truth[id] ?? 0)) < 1.2, "\(id): \(used[id] ?? .nan) vs \(truth[id] ?? 0)")
        }
        let solution = try #require(coordinator.calibration?.solution)
        #expect(solution.pairs == 3)
        #expect(solution.offsets.allSatisfy { $0.confidence > 0.5 && $0.pairs == 2 })

        // A tag 4 dB louder at gw-a as read, 8 dB quieter once gw-a's +6 and gw-b's 0 are taken off... the
        // calibrated gateway decides room b where an uncalibrated one decides room a.
        var plain = RoomCoordinatorTests.coordinator("gw-b")
        for second in 0..<60 {
            let time = Self.t0 + 120 + Double(second)
            for (gateway, rssi) in [("gw-a", -62), ("gw-b", -66), ("gw-c", -90)] {
                let message = try RoomCoordinatorTests.sighting(gateway, rssi: rssi, at: time)
                if gateway == "gw-b" {
                    let own = RoomSighting(
                        gatewayID: "gw-b", beaconID: "tag", time: time, rssi: Double(rssi), rawRSSI: Double(rssi))
                    _ = coordinator.ownSighting(own)
                    _ = plain.ownSighting(own)
                } else {
                    _ = coordinator.receive(message, wall: 0)
                    _ = plain.receive(message, wall: 0)
                }
            }
            _ = coordinator.advance(to: time, wall: 0)
            _ = plain.advance(to: time, wall: 0)
        }
        #expect(coordinator.arbiter.room(of: "tag") == "b")
        #expect(plain.arbiter.room(of: "tag") == "a")
    }

    @Test func handOffsetsOverrideOrFallBack() throws {
        var override = Self.coordinator("gw-b", hand: ["gw-a": 2])
        try Self.feedIdentities(&override, me: "gw-b", from: Self.t0, seconds: 60)
        #expect(override.arbiter.settings.receiverOffsets["gw-a"] == 2)
        #expect(override.arbiter.settings.receiverOffsets["gw-c"] != nil)

        var fallback = Self.coordinator("gw-b", hand: ["gw-a": 2], mode: .fallback)
        #expect(fallback.arbiter.settings.receiverOffsets["gw-a"] == 2)
        try Self.feedIdentities(&fallback, me: "gw-b", from: Self.t0, seconds: 60)
        let solved = try #require(fallback.calibration?.solution?.offset(of: "gw-a")?.receive)
        #expect(fallback.arbiter.settings.receiverOffsets["gw-a"] == solved)
        #expect(abs(solved - 6) < 1.5)
    }

    @Test func theLeaderPublishesAndAFollowerRestores() throws {
        var leader = Self.coordinator("gw-a")
        _ = RoomCoordinatorTests.online(&leader, Self.ids)
        #expect(leader.isLeader)
        var payloads: [String] = []
        var draws = SimulationRandom(seed: 3)
        for second in 1...60 {
            let time = Self.t0 + Double(second)
            for i in Self.ids {
                for j in Self.ids where i != j {
                    let rssi = Double(Self.level(i, j, draws: &draws))
                    _ = leader.ownSighting(
                        RoomSighting(gatewayID: i, beaconID: Self.identity(j), time: time, rssi: rssi, rawRSSI: rssi))
                }
            }
            for effect in leader.advance(to: time, wall: 10) {
                if case let .calibration(payload) = effect { payloads.append(payload) }
            }
        }
        // Every 10 s once the gateways pair (the first solves, before 10 samples per direction, are not published).
        #expect(payloads.count >= 4)
        #expect(leader.counters.calibrationSolves > payloads.count)
        let last = try #require(payloads.last)
        #expect(last.hasPrefix("{\"kind\":\"calibration\",\"gateway\":\"gw-a\""))
        #expect(last.contains("\"receive_offset_db\"") && last.contains("\"confidence\""))

        // A fresh follower (a restart) takes the published offsets before it has any pair of its own.
        var follower = Self.coordinator("gw-c")
        _ = follower.receive(InboundMessage(topic: Self.topics.calibration, payload: Array(last.utf8)), wall: 0)
        #expect(follower.counters.calibrationsRestored == 1)
        let expected = try #require(leader.calibration?.solution?.receiverOffsets)
        for id in Self.ids {
            let restored = try #require(follower.arbiter.settings.receiverOffsets[id])
            #expect(abs(restored - (expected[id] ?? 99)) <= 0.005)
        }
        // Its own first solve, with no pair yet, keeps them.
        _ = follower.advance(to: Self.t0 + 100, wall: 0)
        #expect(follower.counters.calibrationSolves == 1)
        #expect(abs((follower.arbiter.settings.receiverOffsets["gw-a"] ?? 0) - (expected["gw-a"] ?? 99)) <= 0.005)
    }

    @Test func hostileInputIsRefused() throws {
        var coordinator = Self.coordinator("gw-b")
        let identity = Self.identity("gw-a")
        // A gateway that is not of the site, a value that is not finite, a gateway hearing itself.
        for sighting in [
            RoomSighting(gatewayID: "gw-b", beaconID: identity, time: Self.t0, rssi: .nan),
            RoomSighting(gatewayID: "gw-b", beaconID: identity, time: .infinity, rssi: -60),
            RoomSighting(gatewayID: "gw-b", beaconID: identity, time: Self.t0, rssi: 1e308),
            RoomSighting(gatewayID: "gw-b", beaconID: Self.identity("gw-b"), time: Self.t0, rssi: -60),
        ] {
            _ = coordinator.ownSighting(sighting)
        }
        _ = coordinator.receive(
            try RoomCoordinatorTests.sighting("intruder", rssi: -50, at: Self.t0, beacon: identity), wall: 0)
        #expect(coordinator.trackedBeacons == 0)
        #expect(coordinator.calibration?.recorded == 0)
        #expect(coordinator.calibration?.refused == 5)

        // Published calibrations that are not one, or carry values no gateway can have.
        let bad = [
            "garbage", "{}", "{\"kind\":\"room\"}", "{\"kind\":\"calibration\",\"time\":1,\"gateways\":{}}",
            "{\"kind\":\"calibration\",\"time\":\"x\",\"gateways\":[]}",
            String(repeating: "[", count: 10_000),
        ]
        for payload in bad {
            _ = coordinator.receive(
                InboundMessage(topic: Self.topics.calibration, payload: Array(payload.utf8)), wall: 0)
        }
        #expect(coordinator.counters.malformed == bad.count)
        let wild = """
            {"kind":"calibration","gateway":"gw-a","time":1,"pairs":3,"gateways":[
            {"gateway":"gw-a","receive_offset_db":1e308,"pairs":2},
            {"gateway":"gw-b","receive_offset_db":null,"pairs":2},
            {"gateway":"nobody","receive_offset_db":3,"pairs":2},
            {"gateway":"gw-c","receive_offset_db":-4.5,"pairs":2000,"confidence":-7,"samples":1e300}]}
            """
        _ = coordinator.receive(InboundMessage(topic: Self.topics.calibration, payload: Array(wild.utf8)), wall: 0)
        #expect(coordinator.arbiter.settings.receiverOffsets == ["gw-c": -4.5])
        #expect(coordinator.calibration?.restored["gw-c"]?.pairs == 64)
        #expect(coordinator.calibration?.restored["gw-c"]?.confidence == 0)
        #expect(coordinator.calibration?.restored["gw-c"]?.samples == 0)
    }

    @Test func theCalibrationTopicIsNotARoomState() {
        #expect(Self.topics.calibration == "beaconbridge/rooms/calibration")
        #expect(Self.topics.parse("beaconbridge/rooms/calibration") == .calibration)
        #expect(Self.topics.parse("beaconbridge/rooms/tag") == .state(beaconLevel: "tag"))
    }
}
