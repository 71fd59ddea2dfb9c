import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation

/// The position-dependent link bias and postures of the rooms simulator (docs/scenarios.md, "Spatial bias").
@Suite(.ownThread) struct SpatialBiasTests {
    static func scenario(seed: Int = 7, bias: String = "{}", radio: String = quiet) throws(ScenarioError)
        -> RoomScenario
    {
        try RoomScenario(
            json: """
                {"kind": "rooms", "name": "field", "seed": \(seed), "duration_s": 120, "radio": \(radio),
                 "rooms": [{"name": "a", "x": [0, 10], "y": [0, 10]}],
                 "gateways": [{"id": "gw-1", "x": 0, "y": 0}, {"id": "gw-2", "x": 9.9, "y": 9.9}],
                 "spatial_bias": \(bias),
                 "people": [{"id": "tag", "rate_hz": 1, "loss": 0, "path": [{"t": 0, "x": 4, "y": 6}]}]}
                """)
    }

    static let quiet = """
        {"model": "pessimistic", "shadowing_sigma_db": 0, "fading_sigma_db": 0, "channel_offset_sigma_db": 0,
         "body_blocking": {"mean_interval_s": 0}}
        """

    static func correlation(_ pairs: [(Double, Double)]) -> Double {
        let n = Double(pairs.count)
        let ma = pairs.reduce(0) { $0 + $1.0 } / n
        let mb = pairs.reduce(0) { $0 + $1.1 } / n
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        for (a, b) in pairs {
            ab += (a - ma) * (b - mb)
            aa += (a - ma) * (a - ma)
            bb += (b - mb) * (b - mb)
        }
        return ab / (aa * bb).squareRoot()
    }

    @Test func theFieldIsTheSameAtTheSameSpotHasItsSpreadAndDecorrelatesOverMetres() throws {
        var values: [Double] = []
        var near: [(Double, Double)] = []
        var metre: [(Double, Double)] = []
        var far: [(Double, Double)] = []
        for seed in 0..<100 {
            let scenario = try Self.scenario(seed: seed)
            let field = SpatialField(scenario)
            let again = SpatialField(scenario)
            var random = SimulationRandom(seed: UInt64(seed), stream: 99)
            for gateway in 0..<2 {
                for _ in 0..<10 {
                    let x = random.uniform(0, 10)
                    let y = random.uniform(0, 10)
                    let angle = random.uniform(0, 2 * Double.pi)
                    let (dx, dy) = (SpatialField.cosine(angle), SpatialField.cosine(angle - Double.pi / 2))
                    let here = field.bias(gateway: gateway, x: x, y: y)
                    #expect(here == again.bias(gateway: gateway, x: x, y: y))
                    values.append(here)
                    near.append((here, field.bias(gateway: gateway, x: x + 0.2 * dx, y: y + 0.2 * dy)))
                    metre.append((here, field.bias(gateway: gateway, x: x + 1.5 * dx, y: y + 1.5 * dy)))
                    far.append((here, field.bias(gateway: gateway, x: x + 6 * dx, y: y + 6 * dy)))
                }
            }
        }
        let sigma = (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot()
        #expect(sigma > 3.8 && sigma < 5.2)
        #expect(Self.correlation(near) > 0.9)
        #expect(abs(Self.correlation(metre) - 0.37) < 0.15)
        #expect(abs(Self.correlation(far)) < 0.2)
    }

    @Test func aTrainerAtAPersonsSpotMeetsTheSameBiasAtAnotherTimeOnItsOwnStream() throws {
        let scenario = try Self.scenario(bias: #"{"posture_sigma_db": 0}"#).realized()
        let person = scenario.people[0]
        let simulator = RoomSimulator(scenario)
        var earlier = scenario
        earlier.startTime -= 120
        let trainer = ScenarioBeacon(beaconID: "trainer", rate: 1, loss: 0, path: [Waypoint(time: 0, x: 4, y: 6)])
        for gateway in 0..<2 {
            let scored = simulator.link(person, index: 0, gateway: gateway, schedule: [10]).levels
            let trained = RoomSimulator(earlier).link(trainer, index: 40_000, gateway: gateway, schedule: [10]).levels
            #expect(scored == trained)
            let field = SpatialField(scenario).bias(gateway: gateway, x: 4, y: 6)
            #expect(abs(field) > 0.01)
            // Without the field the level differs by exactly the field.
            var flat = scenario
            flat.spatialBias = SpatialBiasRadio(.off)
            let bare = RoomSimulator(flat).link(person, index: 0, gateway: gateway, schedule: [10]).levels
            #expect(abs(scored[0] - bare[0] - field) < 1e-9)
        }
    }

    @Test func posturesAreDrawnPerStayAndPartlySharedByThePersonsLinks() throws {
        let scenario = try Self.scenario(bias: #"{"sigma_db": 0, "posture_shared": 0.5}"#)
        let field = SpatialField(scenario)
        let person = ScenarioBeacon(
            beaconID: "p", path: (0..<4000).map { Waypoint(time: Double($0), x: Double($0 % 7), y: 1) })
        let postures = field.postures(person: person, stream: 3, gateways: 2)
        #expect(postures.count == 4001)
        #expect(postures == field.postures(person: person, stream: 3, gateways: 2))
        #expect(postures != field.postures(person: person, stream: 4, gateways: 2))
        let sigma = (postures.reduce(0) { $0 + $1[0] * $1[0] } / Double(postures.count)).squareRoot()
        #expect(abs(sigma - 3) < 0.2)
        #expect(abs(Self.correlation(postures.map { ($0[0], $0[1]) }) - 0.5) < 0.06)
        #expect(SpatialField(scenario).bias(gateway: 0, x: 3, y: 3) == 0)
    }

    @Test func theOffVariantHasNoneAndTheBlockIsChecked() throws {
        let scenario = try Self.scenario(bias: #"{"variant": "off"}"#)
        #expect(scenario.spatialBias.isOff)
        #expect(SpatialField(scenario).bias(gateway: 1, x: 2, y: 2) == 0)
        #expect(try Self.scenario().spatialBias == SpatialBiasRadio(.measured))
        for (block, path) in [
            (#"{"variant": "wild"}"#, "spatial_bias.variant"), (#"{"sigma_db": 21}"#, "spatial_bias.sigma_db"),
            (#"{"correlation_m": 0}"#, "spatial_bias.correlation_m"), (#"{"waves": 0}"#, "spatial_bias.waves"),
            (#"{"posture_shared": 2}"#, "spatial_bias.posture_shared"), (#"{"other": 1}"#, "spatial_bias.other"),
        ] {
            do {
                _ = try Self.scenario(bias: block)
                Issue.record("accepted \(block)")
            } catch {
                #expect(error.path == path)
            }
        }
        for (x, expected) in [
            (0.0, 1.0), (Double.pi, -1.0), (1.0, 0.5403023058681398), (100.0, 0.8623188722876839),
            (-7.0, 0.7539022543433046),
        ] {
            #expect(abs(SpatialField.cosine(x) - expected) < 1e-9)
        }
    }
}
