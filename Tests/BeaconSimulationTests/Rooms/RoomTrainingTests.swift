import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The rooms simulator's training phase (docs/rooms.md, "Training (issue 29, session 19)"): apart from the scored
/// stream, at spots away from the scored stops, one finite fingerprint per room.
@Suite(.ownThread) struct RoomTrainingTests {
    /// Two 5 × 4 m rooms side by side (a light wall with a doorway), a gateway in each; a tag at rest in a and
    /// a walker going from a to b at 300 s; the `training` block spliced in.
    static func scenario(training: String = "{}", rooms: String? = nil, duration: Int = 600) throws(ScenarioError)
        -> RoomScenario
    {
        try RoomScenario(
            json: """
                {"kind": "rooms", "name": "train", "seed": 5, "duration_s": \(duration), "radio": {"model": "pessimistic"},
                 "rooms": \(rooms ?? #"[{"name": "a", "x": [0, 5], "y": [0, 4]}, {"name": "b", "x": [5, 10], "y": [0, 4]}]"#),
                 "walls": [{"from": [5, 0], "to": [5, 1.5], "attenuation_db": 3.4},
                           {"from": [5, 2.5], "to": [5, 4], "attenuation_db": 3.4}],
                 "gateways": [{"id": "gw-a", "x": 0.3, "y": 2, "room": "a"}, {"id": "gw-b", "x": 9.7, "y": 2, "room": "b"}],
                 "training": \(training),
                 "people": [{"id": "tag", "rate_hz": 2, "loss": 0.1, "path": [{"t": 0, "x": 2.5, "y": 2}]},
                            {"id": "walker", "rate_hz": 5, "path": [{"t": 0, "x": 1.5, "y": 1}, {"t": 300, "x": 1.5, "y": 1},
                             {"t": 310, "x": 7.5, "y": 3}]}]}
                """)
    }

    @Test func theTrainingWalksComeBeforeTheScoredStreamFromTheirOwnDrawsAndLeaveItUnchanged() throws {
        let scenario = try Self.scenario()
        let run = RoomScenarioRun(scenario)
        let world = run.world()
        let walks = world.training.walks
        #expect(walks.map(\.room) == ["a", "b"])
        #expect(walks.map(\.start) == [-120, -60])
        #expect(walks.allSatisfy { $0.start + $0.duration <= 0 && $0.duration == 60 })
        #expect(world.training.vectors.allSatisfy { $0.time <= run.scenario.startTime })
        #expect(!world.sightings.isEmpty && world.sightings.allSatisfy { $0.time >= run.scenario.startTime })
        #expect(!world.sightings.contains { $0.beaconID.hasPrefix("trainer:") })

        // Another training (one spot, 20 s) changes nothing in the scored stream.
        let other = RoomScenarioRun(try Self.scenario(training: #"{"seconds_per_room": 20, "spots": 1}"#)).world()
        #expect(other.sightings == world.sightings)
        #expect(other.training.walks.map(\.start) == [-40, -20])

        // The trainer's draws are its own: its advertising phase differs from the first person's (same rate).
        let simulator = run.simulator
        let trainer = walks[0].trainer
        #expect(trainer.rate == run.scenario.people[0].rate)
        #expect(trainer.measuredPower == run.scenario.people[0].measuredPower)
        let trained = simulator.advertisements(of: trainer, index: 40_000).prefix(20)
        let scored = simulator.advertisements(of: run.scenario.people[0], index: 0).prefix(20)
        #expect(Array(trained) != Array(scored))
    }

    @Test func spotsStandAtTheClearanceFromEveryScoredStopWhereTheRoomAllows() throws {
        let run = RoomScenarioRun(try Self.scenario(training: #"{"spots": 4, "clearance_m": 1.2}"#))
        let stops = RoomTrainingRun.stops(run.scenario)
        // The tag's place, and the walker's first (its 300 s rest) and last waypoints.
        #expect(stops.count == 3)
        for walk in run.world().training.walks {
            #expect(walk.spots.count == 4)
            for spot in walk.spots {
                let nearest =
                    stops.map { (($0.x - spot.x) * ($0.x - spot.x) + ($0.y - spot.y) * ($0.y - spot.y)).squareRoot() }
                    .min() ?? 0
                #expect(nearest >= 1.2)
                #expect(abs(nearest - spot.nearestStop) < 1e-9)
                #expect(run.scenario.plan.room(x: spot.x, y: spot.y) == walk.room)
            }
        }
        // A 1 × 1 m room around a stop cannot keep 1 m: the farthest draw is taken, still inside the room.
        let tiny = try Self.scenario(
            rooms: #"[{"name": "a", "x": [2, 3], "y": [1.5, 2.5]}, {"name": "b", "x": [5, 10], "y": [0, 4]}]"#)
        let walk = RoomTrainingRun.walks(tiny.realized())[0]
        for spot in walk.spots {
            #expect(spot.nearestStop < 1)
            #expect(spot.nearestStop > 0.2)
            #expect(tiny.plan.room(x: spot.x, y: spot.y) == "a")
        }
    }

    @Test func everyRoomHasOneFiniteFingerprintAndItsVectors() throws {
        let run = RoomScenarioRun(try Self.scenario())
        let training = run.world().training
        #expect(training.book.rooms.keys.sorted() == ["a", "b"])
        for (room, fingerprint) in training.book.rooms {
            #expect(fingerprint.room == room)
            #expect(fingerprint.walks == 1)
            #expect(fingerprint.seconds == 60)
            #expect(fingerprint.levels.keys.sorted() == ["gw-a", "gw-b"])
            for level in fingerprint.levels.values {
                #expect(level.mean.isFinite && level.spread.isFinite && level.spread >= 0)
                #expect((0...1).contains(level.heardShare) && level.samples > 0)
            }
            // The room's own gateway is the louder one in its fingerprint.
            let own = fingerprint.levels["gw-" + room]?.mean ?? -200
            let other = fingerprint.levels[room == "a" ? "gw-b" : "gw-a"]?.mean ?? 0
            #expect(own > other)
            let vectors = training.vectors.filter { $0.room == room }
            #expect(vectors.count >= 50 && vectors.count <= 60)
            #expect(vectors.allSatisfy { $0.levels.count == 2 && $0.levels.allSatisfy(\.isFinite) })
        }
        #expect(training.reports.map(\.room) == ["a", "b"])
        #expect(training.reports.allSatisfy { $0.quality == 1 && $0.gatewaysHeard == 2 && $0.nearestStop >= 1 })
    }

    @Test func spreadSpotsTakeOneStripOfTheRoomEachAndRandomOnesMayNot() throws {
        // 5 × 4 m rooms, 3 spots: strips 5/3 m wide along x.
        for seed in UInt64(1)...8 {
            var scenario = try Self.scenario(training: #"{"spots": 3, "clearance_m": 1}"#)
            scenario.seed = seed
            for walk in RoomTrainingRun.walks(scenario.realized()) {
                let minX = walk.room == "a" ? 0.0 : 5.0
                let strips = walk.spots.map { Int((($0.x - minX) / (5.0 / 3)).rounded(.down)) }
                #expect(strips == [0, 1, 2], "seed \(seed) room \(walk.room): \(walk.spots.map(\.x))")
            }
        }
        // The random layout draws the spots from the whole room: over these seeds some walk has two spots in
        // one strip (what the spread layout rules out).
        var clustered = 0
        for seed in UInt64(1)...8 {
            var scenario = try Self.scenario(training: #"{"spots": 3, "clearance_m": 1, "layout": "random"}"#)
            scenario.seed = seed
            for walk in RoomTrainingRun.walks(scenario.realized()) {
                let minX = walk.room == "a" ? 0.0 : 5.0
                let strips = Set(walk.spots.map { Int((($0.x - minX) / (5.0 / 3)).rounded(.down)) })
                if strips.count < 3 { clustered += 1 }
            }
        }
        #expect(clustered > 0)
    }

    @Test func theTrainingBlockIsReadAndCheckedNamingTheKey() throws {
        let scenario = try Self.scenario(training: #"{"seconds_per_room": 30, "spots": 2, "clearance_m": 0.5}"#)
        #expect(scenario.training == RoomTrainingSettings(secondsPerRoom: 30, spots: 2, clearance: 0.5))
        #expect(try Self.scenario(training: #"{"layout": "random"}"#).training.layout == .random)
        #expect(try Self.scenario().training == RoomTrainingSettings())
        for (block, path) in [
            (#"{"seconds_per_room": 61}"#, "training.seconds_per_room"),
            (#"{"spots": 0}"#, "training.spots"),
            (#"{"clearance_m": -1}"#, "training.clearance_m"),
            (#"{"walk": 1}"#, "training.walk"),
            (#"{"layout": "corner"}"#, "training.layout"),
        ] {
            do {
                _ = try Self.scenario(training: block)
                Issue.record("accepted \(block)")
            } catch {
                #expect(error.path == path)
            }
        }
    }
}
