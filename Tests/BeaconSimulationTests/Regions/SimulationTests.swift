import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation
@testable import BeaconTracking

@Suite(.ownThread) struct SimulationTests {
    @Test(arguments: [1e-9, 0.001, 0.5, 1, 2, 2.718281828459045, 10, 12345.678, 1e300])
    func logarithmIsAccurate(x: Double) {
        // ln(x) checked through exp, and against known values.
        let value = ElementaryMath.ln(x)
        #expect(abs(ElementaryMath.exp(value) - x) <= 1e-13 * x)
    }

    @Test func knownValues() {
        #expect(abs(ElementaryMath.ln(2) - 0.693_147_180_559_945_3) < 1e-15)
        #expect(abs(ElementaryMath.log10(1000) - 3) < 1e-14)
        #expect(abs(ElementaryMath.pow10(-1.5) - 0.031_622_776_601_683_79) < 1e-16)
        #expect(ElementaryMath.exp(0) == 1)
        #expect(ElementaryMath.ln(0) == -.infinity)
        #expect(ElementaryMath.ln(-1).isNaN)
        #expect(ElementaryMath.exp(1_000) == .infinity)
    }

    @Test func randomIsDeterministicPerSeedAndStream() {
        var a = SimulationRandom(seed: 42)
        var b = SimulationRandom(seed: 42)
        var c = SimulationRandom(seed: 43)
        let first = (0..<8).map { _ in a.next() }
        #expect(first == (0..<8).map { _ in b.next() })
        #expect(first != (0..<8).map { _ in c.next() })
        var s0 = SimulationRandom(seed: 42, stream: 0)
        var s1 = SimulationRandom(seed: 42, stream: 1)
        #expect(s0.next() != s1.next())
    }

    @Test func gaussianHasUnitVarianceAndUniformStaysInRange() {
        var random = SimulationRandom(seed: 7)
        var sum = 0.0
        var squares = 0.0
        let count = 100_000
        for _ in 0..<count {
            let value = random.gaussian()
            sum += value
            squares += value * value
            let u = random.uniform()
            #expect(u >= 0 && u < 1)
        }
        let mean = sum / Double(count)
        #expect(abs(mean) < 0.02)
        #expect(abs(squares / Double(count) - mean * mean - 1) < 0.02)
    }

    @Test func simulatedReportsFollowTheRadioModel() {
        let beacon = ScenarioBeacon(
            beaconID: "b", identifiers: [], measuredPower: -59, rate: 10, loss: 0.3, sigma: 6,
            path: [Waypoint(time: 0, x: 3, y: 4)], dropouts: [Dropout(start: 100, duration: 50)])
        let scenario = Scenario(
            seed: 9, duration: 1_000, radio: ScenarioRadio(model: .independent), regions: [],
            beacons: [beacon])
        let reports = ScenarioSimulator(scenario).observations()
        // 10 Hz with 30 % loss over 950 s heard: about 6 650 reports.
        #expect(abs(Double(reports.count) - 6_650) < 300)
        #expect(
            !reports.contains { $0.timestamp >= scenario.startTime + 100 && $0.timestamp < scenario.startTime + 150 })
        let mean = Double(reports.reduce(0) { $0 + $1.rssi! }) / Double(reports.count)
        // 5 m: −59 − 27·log10(5) = −77.9 dBm.
        #expect(abs(mean - -77.87) < 0.3)
        #expect(reports == ScenarioSimulator(scenario).observations(), "same seed, same stream")
        var other = scenario
        other.seed = 10
        #expect(reports != ScenarioSimulator(other).observations())
    }

    @Test func channelOffsetsShiftReportsWhileTheScannerDwells() {
        let beacon = ScenarioBeacon(beaconID: "b", rate: 20, loss: 0, sigma: 0, path: [Waypoint(time: 0, x: 1)])
        let radio = ScenarioRadio(model: .independent, sigma: 0, channelOffsets: [0, -3, 2], channelDwell: 5)
        let scenario = Scenario(duration: 15, radio: radio, regions: [], beacons: [beacon])
        let reports = ScenarioSimulator(scenario).observations()
        for report in reports {
            let t = report.timestamp - scenario.startTime
            #expect(report.rssi == -59 + (t < 5 ? 0 : t < 10 ? -3 : 2))
        }
        #expect(reports.count > 250)
    }

    @Test func pathsInterpolateBetweenWaypoints() {
        let beacon = ScenarioBeacon(
            beaconID: "b", path: [Waypoint(time: 10, x: -5, y: 1), Waypoint(time: 20, x: 5, y: 1)])
        #expect(beacon.distance(at: 0) == (26.0).squareRoot())
        #expect(beacon.distance(at: 15) == 1)
        #expect(beacon.distance(at: 99) == (26.0).squareRoot())
    }

    @Test func groundTruthUsesTheRegionLevels() {
        let rule = RegionRule(name: "r", match: RegionMatch(), enter: .distance(3))
        let beacon = ScenarioBeacon(
            beaconID: "b", path: [Waypoint(time: 0, x: 10), Waypoint(time: 10, x: 0), Waypoint(time: 20, x: 10)])
        let truth = ScenarioSimulator(Scenario(duration: 30, regions: [rule], beacons: [beacon])).groundTruth()
        #expect(truth.map(\.kind) == [.enter, .exit])
        // Crosses 3 m inbound at t = 7 and the 4.5 m exit radius outbound at t = 14.5.
        #expect(abs(truth[0].time - 1_700_000_007) < 0.06)
        #expect(abs(truth[1].time - 1_700_000_014.5) < 0.06)
    }

    /// A beacon that walks in while the gateway is down (restart at 100 s, 30 s down) cannot be heard before
    /// 130 s: its enter latency counts from then, not from the true crossing at about 108.6 s.
    @Test func enterLatencyOfATransitionWhileDownCountsFromTheRestart() {
        let walker = ScenarioFixtures.beacon(
            1, path: [Waypoint(time: 105, x: 12), Waypoint(time: 110, x: 1)], loss: 0, sigma: 0)
        var scenario = ScenarioFixtures.scenario(seed: 1, duration: 300, beacons: [walker], restarts: [100])
        scenario.restartDowntime = 30
        let run = ScenarioRun(scenario)
        let back = scenario.startTime + 130
        #expect(run.truth.map(\.kind) == [.enter])
        #expect(run.truth.allSatisfy { $0.time > scenario.startTime + 100 && $0.time < back })
        let latencies = run.run().enterLatencies
        #expect(latencies.count == 1)
        // Heard again from 130 s, 12.9 dB above the level (clamped to 11): 30 dB·s at 7.5 dB·s a second, 4 s.
        #expect(latencies.allSatisfy { $0 >= 0 && $0 < 10 }, "\(latencies)")
    }
}

@Suite struct ScenarioFileTests {
    @Test func readerParsesEveryJSONKind() throws {
        let value = try JSONValue(
            parsing: #" {"a": [1, -2.5e1, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(
            value
                == .object([
                    ("a", .array([.int(1), .double(-25), .bool(true), .bool(false), .null, .string("x\né😀")])),
                    ("b", .object([])),
                ]))
    }

    @Test(arguments: [
        ("{\"a\": 1,}", "line 1, column 9"), ("[1 2]", "line 1, column 4"), ("{\"a\": 01}", "line 1, column 7"),
        ("{\n  \"a\": tru }", "line 2, column 8"), ("\"abc", "unterminated string"),
        ("{\"a\":1,\"a\":2}", "duplicate key"),
        (String(repeating: "[", count: 100), "nesting"),
    ])
    func readerReportsWhere(text: String, expected: String) {
        do {
            _ = try JSONValue(parsing: text)
            Issue.record("parsed invalid JSON \(text)")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    static let minimal = #"""
        {"duration_s": 60, "regions": [{"name": "desk", "match": {"uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0"},
          "enter": {"distance_below": 2}}],
         "beacons": [{"format": "ibeacon", "identifiers": ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", 1, 2],
          "path": [{"t": 0, "x": 5}]}]}
        """#

    @Test func minimalScenarioGetsDefaults() throws {
        let scenario = try Scenario(json: Self.minimal)
        #expect(scenario.duration == 60)
        #expect(scenario.seed == 1)
        #expect(scenario.radio == ScenarioRadio())
        // Read by the YAML's own `match:` decoder: trailing "any" positions are left out.
        #expect(scenario.regions[0].match.identifiers == ["e2c56db5-dffb-48d2-b060-d0f5a71096e0"])
        #expect(scenario.regions[0].enter == .distance(2))
        #expect(scenario.beacons[0].beaconID == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        #expect(scenario.beacons[0].rate == 10)
    }

    @Test func scenarioSizeIsBounded() {
        let text = Self.minimal.replacingFirst("\"duration_s\": 60", with: "\"duration_s\": 600000")
            .replacingFirst("\"path\"", with: "\"rate_hz\": 100, \"path\"")
        #expect(throws: ScenarioError.self) { try Scenario(json: text) }
        do {
            _ = try Scenario(json: text)
        } catch {
            #expect(error.path == "beacons")
            #expect(error.message.hasPrefix("too large: 60000000 advertisements"))
        }
    }

    @Test(arguments: [
        ("\"duration_s\": 60", "\"duration_s\": -1", "duration_s", ScenarioError.Kind.malformed),
        ("\"t\": 0", "\"t\": \"zero\"", "beacons[0].path[0].t", .malformed),
        // Regions and `tracker` are read by the YAML configuration's decoders: their problems are configuration
        // errors (as `check-config` reports them), a misspelt key with the same "did you mean" hint.
        ("\"distance_below\": 2", "\"distance_belwo\": 2", "regions[0].enter.distance_belwo", .invalid),
        ("\"enter\": {", "\"exit_period_s\": \"soon\", \"enter\": {", "regions[0].exit_period_s", .invalid),
        ("\"distance_below\": 2", "\"distance_below\": -2", "regions[0].enter.distance_below", .invalid),
        ("\"uuid\": \"e2c56db5", "\"uuid\": \"x2c56db5", "regions[0].match.uuid", .invalid),
    ])
    func errorsNameTheKeyPath(original: String, replacement: String, path: String, kind: ScenarioError.Kind) {
        let text = Self.minimal.replacingFirst(original, with: replacement)
        #expect(text != Self.minimal)
        do {
            _ = try Scenario(json: text)
            Issue.record("accepted \(replacement)")
        } catch {
            #expect(error.path == path, "\(error)")
            #expect(error.kind == kind)
        }
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
