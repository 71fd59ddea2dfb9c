import TestSupport
import Testing

@testable import BeaconModel
@testable import BeaconSimulation
@testable import BeaconTracking

/// The region scenarios' teach phase (issue 43): what a teach records on the measured radio, the oracle that is
/// told each link's constant offset, and a taught run against the untaught one on the same stream. Seeded, so
/// every run is the same; the bounds are what these seeds measured, with the model's expected spread beside.
@Suite(.ownThread) struct TeachPhaseTests {
    typealias F = ScenarioFixtures

    static func radio(_ change: (inout RealisticRadio) -> Void = { _ in }) -> ScenarioRadio {
        var radio = ScenarioRadio(model: .measured)
        radio.realistic.blocking.meanInterval = 0
        change(&radio.realistic)
        return radio
    }

    static func beacon(_ index: Int, path: [Waypoint], rate: Double = 10) -> ScenarioBeacon {
        ScenarioBeacon(
            beaconID: "ibeacon:\(F.uuid):1:\(index)", format: "ibeacon", identifiers: [F.uuid, "1", String(index)],
            address: BluetoothAddress(rawValue: 0xC0_0000_0000 | UInt64(index)), measuredPower: -59, rate: rate,
            loss: 0.15, path: path)
    }

    /// A walker: 12 m out, in to 1.5 m at 60 s, resting there until 400 s, out again.
    static func walker(_ index: Int, rate: Double = 10) -> ScenarioBeacon {
        beacon(
            index,
            path: [
                Waypoint(time: 0, x: 12), Waypoint(time: 60, x: 12), Waypoint(time: 69, x: 1.5),
                Waypoint(time: 400, x: 1.5), Waypoint(time: 409, x: 12),
            ], rate: rate)
    }

    static func key(_ index: Int) -> TeachPhase.Key {
        TeachPhase.Key(region: "office", beaconID: "ibeacon:\(F.uuid):1:\(index)")
    }

    @Test func aTeachRecordsTheLinksOffsetWithinThePostureAndNoise() {
        // 40 links: the boundary's recorded median minus (the enter level + the link's drawn constant offset) is
        // the teach's posture (σ 3 dB) plus what 30 s of correlated shadowing and fading leave (about 1 dB):
        // expected spread √(9 + 1) ≈ 3.2 dB, mean 0. Without posture only the noise is left.
        let level = -59 - 27 * ElementaryMath.log10(3)
        func errors(_ radio: ScenarioRadio) -> [Double] {
            let beacons = (0..<40).map { Self.beacon($0, path: [Waypoint(time: 0, x: 12)]) }
            let scenario = Scenario(seed: 11, duration: 10, radio: radio, regions: [F.room], beacons: beacons)
            let result = TeachPhase().teach(scenario)
            return (0..<40).map { index in
                let key = Self.key(index)
                return (result.taught[key]?.boundary?.level ?? .nan) - (level + (result.offsets[key] ?? .nan))
            }
        }
        let withPosture = errors(Self.radio())
        let mean = withPosture.reduce(0, +) / 40
        let sd = (withPosture.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 39).squareRoot()
        #expect(abs(mean) < 1.2, "mean \(mean)")
        #expect(sd > 2.2 && sd < 4.2, "sd \(sd)")
        #expect(withPosture.allSatisfy { abs($0) < 9 }, "\(withPosture)")
        let still = errors(Self.radio { $0.postureSigma = 0 })
        #expect(still.allSatisfy { abs($0) < 3 }, "\(still)")
        // The offsets themselves are the radio's: placement σ 4.5 dB and a channel mean of σ 2.9/√3 dB.
        let offsets = TeachPhase().teach(
            Scenario(
                seed: 11, duration: 10, radio: Self.radio(), regions: [F.room],
                beacons: (0..<40).map { Self.beacon($0, path: [Waypoint(time: 0, x: 12)]) })
        ).offsets.values
        #expect(offsets.contains { $0 > 4 } && offsets.contains { $0 < -4 })
    }

    @Test func theTurningTeachAveragesPosturesWithoutBias() {
        // Session 30 (docs/tracking-and-regions.md, "Session 30: the teach's level error"): the same 40 links
        // taught still (one posture per hold) and turning (four, a quarter each). The turning hold's median is
        // the postures' mean plus the noise: expected spread √(9/4 + 1) ≈ 1.8 dB against the still √(9 + 1)
        // ≈ 3.2 dB, both centred on 0 (the postures are symmetric in dB, so the median of their mixture is not
        // pulled either way).
        let level = -59 - 27 * ElementaryMath.log10(3)
        let beacons = (0..<40).map { Self.beacon($0, path: [Waypoint(time: 0, x: 12)]) }
        let scenario = Scenario(seed: 11, duration: 10, radio: Self.radio(), regions: [F.room], beacons: beacons)
        func errors(_ phase: TeachPhase) -> (mean: Double, sd: Double) {
            let result = phase.teach(scenario)
            let errors = (0..<40).map { index in
                let key = Self.key(index)
                return (result.taught[key]?.boundary?.level ?? .nan) - (level + (result.offsets[key] ?? .nan))
            }
            let mean = errors.reduce(0, +) / 40
            return (mean, (errors.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 39).squareRoot())
        }
        let still = errors(TeachPhase())
        let turning = errors(TeachPhase(postures: 4))
        #expect(abs(turning.mean) < 0.8, "mean \(turning.mean)")
        #expect(turning.sd > 1.0 && turning.sd < 2.6, "sd \(turning.sd)")
        #expect(turning.sd < still.sd, "still \(still.sd), turning \(turning.sd)")
    }

    @Test func aRetryTeachesAgainOnlyTheSpotsTheQualityFigureFlags() {
        // Half the beacons at 0.7 Hz (about 18 reports in 30 s, under `TeachQuality.minimumReports`): flagged,
        // taught again from a fresh hold. The 10 Hz ones are good at once and keep their first hold.
        let beacons = (0..<20).map {
            Self.beacon($0, path: [Waypoint(time: 0, x: 12)], rate: $0 % 2 == 0 ? 10 : 0.7)
        }
        let scenario = Scenario(seed: 7, duration: 10, radio: Self.radio(), regions: [F.room], beacons: beacons)
        let once = TeachPhase().teach(scenario)
        #expect(TeachPhase(retries: 0).teach(scenario).taught == once.taught)
        let again = TeachPhase(retries: 1).teach(scenario)
        var retaught = 0
        for index in 0..<20 {
            let key = Self.key(index)
            let first = once.taught[key]?.boundary
            if TeachQuality(spot: .boundary, level: first).isGood {
                #expect(again.taught[key]?.boundary == first, "\(index)")
            } else if again.taught[key]?.boundary != first {
                retaught += 1
            }
            #expect(again.oracle[key] == once.oracle[key])
        }
        #expect(retaught >= 5, "\(retaught)")
    }

    @Test func aRetryJudgesByTheChecksAsked() {
        // With the step check a spot is taught again when its halves' medians are 8 dB or more apart (or it has
        // too few reports), whatever its spread; a spot the step check calls good keeps its first hold.
        let beacons = (0..<20).map {
            Self.beacon($0, path: [Waypoint(time: 0, x: 12)], rate: $0 % 2 == 0 ? 10 : 0.7)
        }
        let scenario = Scenario(seed: 7, duration: 10, radio: Self.radio(), regions: [F.room], beacons: beacons)
        let once = TeachPhase(checks: .step).teach(scenario)
        #expect(once.taught == TeachPhase().teach(scenario).taught)
        let again = TeachPhase(retries: 1, checks: .step).teach(scenario)
        for index in 0..<20 {
            let key = Self.key(index)
            let first = once.taught[key]?.boundary
            if TeachQuality(spot: .boundary, level: first, checks: .step).isGood {
                #expect(again.taught[key]?.boundary == first, "\(index)")
            }
        }
    }

    @Test func theRecordingsAreWhatTheTeachSummarises() throws {
        // `recordings` (what `simulate --teach-errors` reads) hands out each spot's reports; `teach` is their
        // `LevelRecorder` summaries, with the same oracle.
        let scenario = Scenario(
            seed: 3, duration: 60, radio: Self.radio(), regions: [F.room], beacons: [Self.walker(1), Self.walker(2)])
        let phase = TeachPhase()
        let result = phase.teach(scenario)
        let recordings = phase.recordings(scenario)
        #expect(recordings.count == 2)
        for recording in recordings {
            var recorder = LevelRecorder()
            for report in recording.boundary { recorder.add(rssi: report.rssi, at: report.at) }
            #expect(recording.boundary.count >= 200 && recording.inside.count >= 200)
            #expect(result.taught[recording.key]?.boundary == recorder.summary)
            #expect(result.oracle[recording.key] == recording.oracle)
            #expect(result.offsets[recording.key] == recording.offset)
        }
    }

    @Test func theOracleIsToldTheScoredStreamsOwnOffset() {
        // With every random term but the placement off, each scored report is round(mean + placement): the
        // oracle's boundary level minus the enter level must equal what the stream shows, to the rounding.
        let radio = Self.radio {
            $0.postureSigma = 0
            $0.shadowingSigma = 0
            $0.fadingSigma = 0
            $0.channelOffsetSigma = 0
        }
        let beacons = (0..<10).map { Self.beacon($0, path: [Waypoint(time: 0, x: 2)]) }
        let scenario = Scenario(seed: 5, duration: 20, radio: radio, regions: [F.room], beacons: beacons)
        let result = TeachPhase().teach(scenario)
        let level = -59 - 27 * ElementaryMath.log10(3)
        let mean2m = -59 - 27 * ElementaryMath.log10(2)
        for report in ScenarioSimulator(scenario).observations() {
            let index = Int(report.beaconID.split(separator: ":").last!)!
            let oracle = result.oracle[Self.key(index)]?.boundary?.level ?? .nan
            #expect(abs(Double(report.rssi!) - mean2m - (oracle - level)) <= 0.5)
        }
        // And the taught level, on this noiseless radio, is the oracle's to the rounding.
        for index in 0..<10 {
            let key = Self.key(index)
            let taught = result.taught[key]?.boundary?.level ?? .nan
            #expect(abs(taught - (result.oracle[key]?.boundary?.level ?? .nan)) <= 0.5)
        }
    }

    @Test func taughtRulesKeepTheScenariosRegionNamesAndStream() {
        let scenario = Scenario(
            seed: 3, duration: 500, radio: Self.radio(), regions: [F.room], beacons: [Self.walker(1), Self.walker(2)])
        let result = TeachPhase().teach(scenario)
        let taught = TaughtRegions(scenario: scenario, links: result.taught)
        #expect(taught.rules.count == 2)
        #expect(Set(taught.rules.map(\.name)).count == 2)
        var regions: Set<String> = []
        let run = ScenarioRun(scenario)
        let summary = run.run(taught: taught) { event in
            if case let .region(region) = event { regions.insert(region.region) }
        }
        #expect(regions == ["office"])
        #expect(summary.pairs.count == 2)
        #expect(summary.pairs.allSatisfy { $0.judgedSeconds > 400 })
    }

    @Test func aTaughtRunBeatsTheUntaughtForALinkWithALargeNegativeOffset() throws {
        // The first seed whose walker's link lies 6 dB or more below the law: untaught, its reports at 1.5 m
        // stand about 8 - 6 = 2 dB above the enter level, under the 3.5 dB margin; taught, the levels move with it.
        let beacon = Self.walker(1)
        func scenario(_ seed: UInt64) -> Scenario {
            Scenario(seed: seed, duration: 500, radio: Self.radio(), regions: [F.room], beacons: [beacon])
        }
        let seed = try #require(
            (UInt64(1)...200).first { seed in
                ScenarioSimulator(scenario(seed)).linkConstants(of: beacon, index: 0).offset < -6
            })
        let summary = ScenarioRun(scenario(seed)).runTaught(TeachPhase())
        let taught = try #require(summary.baselines.first { $0.name == ScenarioRun.taughtName })
        let oracle = try #require(summary.baselines.first { $0.name == ScenarioRun.oracleName })
        #expect(taught.rightFraction > summary.rightFraction + 0.05)
        #expect(oracle.rightFraction > summary.rightFraction + 0.05)
    }
}
