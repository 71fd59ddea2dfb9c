import BeaconSimulation
import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// The self-calibration solver on synthetic pair levels (docs/rooms.md, "Self-calibration").
@Suite(.ownThread) struct GatewayCalibrationTests {
    static let t0: Timestamp = 1_700_000_000

    /// A world of gateways: receive offsets g, transmit offsets t, reciprocal path levels L (symmetric) and the
    /// non-reciprocal part of each direction; `hears(i, j)` says whether receiver i hears transmitter j.
    struct World {
        var ids: [String]
        var g: [Double]
        var t: [Double]
        var path: [[Double]]
        var asymmetry: [[Double]]
        /// Antenna/placement gain, the same both ways (invisible to pairs; beacons see g + gain).
        var gain: [Double] = []
        var hears: (Int, Int) -> Bool = { _, _ in true }

        func level(_ i: Int, _ j: Int) -> Double {
            let both = gain.isEmpty ? 0 : gain[i] + gain[j]
            return -60 + t[j] + g[i] + both + path[i][j] + asymmetry[i][j]
        }

        /// Every direction heard `count` times over `seconds`, each sample with Gaussian noise of `noise` dB
        /// rounded to whole dB when `noise` > 0.
        func feed(
            _ calibration: inout GatewayCalibration, count: Int = 60, seconds: Double = 120, noise: Double = 0,
            draws: inout SimulationRandom
        ) {
            for step in 0..<count {
                let time = GatewayCalibrationTests.t0 + seconds * Double(step) / Double(count)
                for i in ids.indices {
                    for j in ids.indices where i != j && hears(i, j) {
                        let value = noise > 0 ? (level(i, j) + noise * draws.gaussian()).rounded() : level(i, j)
                        _ = calibration.record(receiver: ids[i], transmitter: ids[j], rssi: value, at: time)
                    }
                }
            }
        }
    }

    static func world(_ n: Int, draws: inout SimulationRandom, receive: Double, transmit: Double, asymmetry: Double)
        -> World
    {
        var path = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        var asym = path
        for i in 0..<n {
            for j in (i + 1)..<max(n, i + 1) {
                let shared = -15 - 15 * draws.uniform()
                path[i][j] = shared
                path[j][i] = shared
                let split = asymmetry * draws.gaussian() / 2
                asym[i][j] = split
                asym[j][i] = -split
            }
        }
        return World(
            ids: (0..<n).map { "gw-\($0)" }, g: (0..<n).map { _ in receive * draws.gaussian() },
            t: (0..<n).map { _ in transmit * draws.gaussian() }, path: path, asymmetry: asym)
    }

    static func centred(_ values: [Double]) -> [Double] {
        let mean = values.reduce(0, +) / Double(max(values.count, 1))
        return values.map { $0 - mean }
    }

    static func exactSettings() -> GatewayCalibration.Settings {
        var settings = GatewayCalibration.Settings()
        settings.transmitSigma = 0
        settings.asymmetrySigma = 0.001
        return settings
    }

    @Test func noiseFreePairsRecoverTheReceiveOffsetsExactlyWhenTransmittersAgree() {
        var draws = SimulationRandom(seed: 1)
        var world = Self.world(4, draws: &draws, receive: 5, transmit: 0, asymmetry: 0)
        world.t = [0, 0, 0, 0]
        var calibration = GatewayCalibration(settings: Self.exactSettings())
        world.feed(&calibration, draws: &draws)
        let solution = calibration.solve(at: Self.t0 + 120)
        #expect(solution.pairs == 6)
        let estimate = Self.centred(world.ids.map { solution.offset(of: $0)?.receive ?? .nan })
        for (got, want) in zip(estimate, Self.centred(world.g)) { #expect(abs(got - want) < 0.01) }
        for offset in solution.offsets { #expect(offset.confidence > 0.9 && offset.pairs == 3) }
    }

    @Test func transmitOffsetsAreIdentifiedOnlyInTheDifference() {
        // Pairs see g - t: with transmit offsets present the difference is exact, the receive offset is not.
        var draws = SimulationRandom(seed: 2)
        let world = Self.world(4, draws: &draws, receive: 5, transmit: 3, asymmetry: 0)
        var calibration = GatewayCalibration(settings: Self.exactSettings())
        world.feed(&calibration, draws: &draws)
        let solution = calibration.solve(at: Self.t0 + 120)
        let difference = Self.centred(world.ids.map { solution.offset(of: $0)?.difference ?? .nan })
        let truth = Self.centred(zip(world.g, world.t).map { $0 - $1 })
        for (got, want) in zip(difference, truth) { #expect(abs(got - want) < 0.01) }
        let receive = Self.centred(world.ids.map { solution.offset(of: $0)?.receive ?? .nan })
        let error = zip(receive, Self.centred(world.g)).map { abs($0 - $1) }.max() ?? 0
        #expect(error > 0.5, "the transmit offsets leak into the receive offsets: \(error)")
    }

    @Test func noisyLinksGiveABoundedErrorAndAnHonestUncertainty() {
        var draws = SimulationRandom(seed: 3)
        var errors: [Double] = []
        var uncertainties: [Double] = []
        var within = 0
        for _ in 0..<40 {
            var world = Self.world(5, draws: &draws, receive: 5, transmit: 1, asymmetry: 2)
            world.gain = (0..<5).map { _ in 2 * draws.gaussian() }
            var calibration = GatewayCalibration()
            world.feed(&calibration, count: 200, seconds: 290, noise: 4, draws: &draws)
            let solution = calibration.solve(at: Self.t0 + 290)
            let estimate = Self.centred(world.ids.map { solution.offset(of: $0)?.receive ?? .nan })
            // What a beacon's RSSI carries: g + gain.
            let truth = Self.centred(zip(world.g, world.gain).map { $0 + $1 })
            for (index, (got, want)) in zip(estimate, truth).enumerated() {
                let uncertainty = solution.offset(of: world.ids[index])?.uncertainty ?? 0
                errors.append(got - want)
                uncertainties.append(uncertainty)
                if abs(got - want) <= 2.5 * uncertainty { within += 1 }
            }
        }
        let rms = (errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot()
        let typical = uncertainties.reduce(0, +) / Double(uncertainties.count)
        // The gain (2 dB, invisible) dominates: about 1.8 dB centred over five gateways, plus the rest.
        #expect(rms < 3, "RMS error \(rms) dB against receive offsets of 5 dB spread")
        #expect(typical > 0.6 * rms && typical < 1.6 * rms, "uncertainty \(typical) dB against RMS error \(rms) dB")
        #expect(Double(within) / Double(errors.count) > 0.9, "\(within) of \(errors.count) within 2.5 uncertainties")
    }

    @Test func aChainOfPairsIsEnoughAndAGatewayThatHearsNobodyHasNoConfidence() {
        var draws = SimulationRandom(seed: 4)
        var world = Self.world(5, draws: &draws, receive: 5, transmit: 0, asymmetry: 0)
        world.t = [0, 0, 0, 0, 0]
        // 0-1, 1-2, 2-3 only; gateway 4 hears 0 but 0 never hears 4 (one way: no pair).
        world.hears = { i, j in abs(i - j) == 1 && max(i, j) <= 3 || (i == 4 && j == 0) }
        var calibration = GatewayCalibration(settings: Self.exactSettings())
        world.feed(&calibration, draws: &draws)
        let solution = calibration.solve(at: Self.t0 + 120)
        #expect(solution.pairs == 3)
        let chain = Self.centred((0...3).map { solution.offset(of: world.ids[$0])?.receive ?? .nan })
        for (got, want) in zip(chain, Self.centred(Array(world.g[0...3]))) { #expect(abs(got - want) < 0.01) }
        let lonely = solution.offset(of: "gw-4")
        #expect(lonely?.confidence == 0 && lonely?.pairs == 0 && lonely?.receive == 0)
        // Prior only: the receivers' spread and the unseen gain, (5² + 2²)^½ dB.
        #expect(abs((lonely?.uncertainty ?? 0) - 29.0.squareRoot()) < 1e-9)
        // The ends of the chain are pinned by one pair each, the middle by two.
        let end = solution.offset(of: "gw-0")?.confidence ?? 0
        let middle = solution.offset(of: "gw-1")?.confidence ?? 0
        #expect(end > 0.5 && middle >= end)
    }

    @Test func inconsistentPairsLowerTheConfidence() {
        var consistent = GatewayCalibration()
        var inconsistent = GatewayCalibration()
        for step in 0..<30 {
            let time = Self.t0 + Double(step)
            for (r, t, level) in [("a", "b", -70.0), ("b", "a", -74.0), ("b", "c", -70.0), ("c", "b", -74.0)] {
                consistent.record(receiver: r, transmitter: t, rssi: level, at: time)
                inconsistent.record(receiver: r, transmitter: t, rssi: level, at: time)
            }
            // Around the loop a-b-c the differences sum to 0 in one world and to 24 dB in the other.
            consistent.record(receiver: "c", transmitter: "a", rssi: -76, at: time)
            consistent.record(receiver: "a", transmitter: "c", rssi: -68, at: time)
            inconsistent.record(receiver: "c", transmitter: "a", rssi: -60, at: time)
            inconsistent.record(receiver: "a", transmitter: "c", rssi: -76, at: time)
        }
        let good = consistent.solve(at: Self.t0 + 30)
        let bad = inconsistent.solve(at: Self.t0 + 30)
        for id in ["a", "b", "c"] {
            #expect((good.offset(of: id)?.residual ?? 99) < 0.5)
            #expect((bad.offset(of: id)?.residual ?? 0) > 6)
            #expect((bad.offset(of: id)?.confidence ?? 1) < (good.offset(of: id)?.confidence ?? 0) / 2)
        }
    }

    @Test func hostileInputsAreRejectedWithAReasonAndNeverTrap() {
        var calibration = GatewayCalibration()
        let cases: [(String, String, Double, Double, GatewayCalibration.Rejection)] = [
            ("a", "b", .nan, Self.t0, .notFinite),
            ("a", "b", .infinity, Self.t0, .notFinite),
            ("a", "b", -60, .infinity, .notFinite),
            ("a", "b", -60, -.nan, .notFinite),
            ("a", "b", 1e308, Self.t0, .rssiOutOfRange(1e308)),
            ("a", "b", -200, Self.t0, .rssiOutOfRange(-200)),
            ("", "b", -60, Self.t0, .invalidGatewayID),
            ("a", "b\u{0}", -60, Self.t0, .invalidGatewayID),
            ("a", String(repeating: "x", count: 200), -60, Self.t0, .invalidGatewayID),
            ("a", "a", -60, Self.t0, .sameGateway),
        ]
        for (receiver, transmitter, rssi, time, reason) in cases {
            let result = calibration.record(receiver: receiver, transmitter: transmitter, rssi: rssi, at: time)
            guard let got = result else {
                Issue.record("accepted \(receiver) \(transmitter) \(rssi) \(time)")
                continue
            }
            #expect(got == reason)
        }
        #expect(calibration.solve(at: Self.t0).offsets.isEmpty)
        // Bounded: gateways beyond the limit, and samples older than the window, are refused.
        for index in 0..<64 {
            _ = calibration.record(receiver: "gw-\(index)", transmitter: "gw-x", rssi: -70, at: Self.t0 + 1000)
        }
        let overflow = calibration.record(receiver: "gw-64", transmitter: "gw-0", rssi: -70, at: Self.t0 + 1000)
        #expect(overflow == .tooManyGateways)
        let old = calibration.record(receiver: "gw-1", transmitter: "gw-0", rssi: -70, at: Self.t0)
        #expect(old == .olderThanWindow)
        let solution = calibration.solve(at: .nan)
        #expect(solution.offsets.count == 64)
        #expect(solution.offsets.allSatisfy { $0.receive.isFinite && $0.uncertainty.isFinite })
    }

    @Test func samplesPerLinkAreBoundedAndTheWindowForgetsAMovedGateway() {
        var calibration = GatewayCalibration()
        // Five minutes with b reading 6 dB louder than a, then b is replaced by a receiver that reads as a does.
        for second in 0..<2000 {
            let time = Self.t0 + Double(second) * 0.5
            let louder = second < 600 ? 6.0 : 0.0
            calibration.record(receiver: "a", transmitter: "b", rssi: -70, at: time)
            calibration.record(receiver: "b", transmitter: "a", rssi: -70 + louder, at: time)
        }
        #expect(calibration.levels().values.allSatisfy { $0.count <= 600 })
        let solution = calibration.solve(at: Self.t0 + 1000)
        let difference = (solution.offset(of: "b")?.receive ?? 99) - (solution.offset(of: "a")?.receive ?? 99)
        #expect(abs(difference) < 0.5, "the old level is forgotten: \(difference)")
    }
}
