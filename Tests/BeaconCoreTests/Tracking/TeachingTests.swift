import Testing

@testable import BeaconTracking

@Suite struct TeachingTests {
    @Test func recorderSummarisesWithMedianAndRobustSpread() throws {
        var recorder = LevelRecorder()
        #expect(recorder.summary == nil)
        // 21 reports around -70 with two reflections far off: the median and the spread ignore them.
        for index in 0..<19 { recorder.add(rssi: -70 + (index % 3) - 1, at: Double(index)) }
        recorder.add(rssi: -40, at: 19)
        recorder.add(rssi: -100, at: 20)
        let summary = try #require(recorder.summary)
        #expect(summary.level == -70)
        #expect(summary.reports == 21)
        #expect(summary.seconds == 20)
        #expect(summary.spread > 0.5 && summary.spread < 2)
    }

    @Test func recorderIsBoundedAndIgnoresImpossibleLevels() {
        var recorder = LevelRecorder(capacity: 5)
        recorder.add(rssi: 50, at: 0)
        recorder.add(rssi: -200, at: 0)
        recorder.add(rssi: -60, at: .nan)
        #expect(recorder.count == 0)
        for index in 0..<10 { recorder.add(rssi: -60, at: Double(index)) }
        #expect(recorder.count == 5)
        #expect(recorder.summary?.seconds == 4)
    }

    @Test func levelsComeFromTheBoundaryAlone() throws {
        // Enter 2 dB below the taught boundary (`taughtEnterAllowance`), exit 5 dB below the enter level; the
        // inside level does not move them (issue 43's figures: docs/tracking-and-regions.md).
        let boundary = TaughtLevel(level: -75, spread: 2, reports: 30, seconds: 30)
        #expect(TaughtRegionLink().levels == nil)
        let boundaryOnly = try #require(TaughtRegionLink(boundary: boundary).levels)
        #expect(boundaryOnly.enter == -77 && boundaryOnly.exit == -82)
        for inside in [-55.0, -70] {
            let levels = try #require(
                TaughtRegionLink(
                    boundary: boundary, inside: TaughtLevel(level: inside, spread: 2, reports: 30, seconds: 30)
                ).levels)
            #expect(levels.enter == -77 && levels.exit == -82)
        }
        let shifted = try #require(TaughtRegionLink(boundary: boundary).shifted(by: 4).levels)
        #expect(shifted.enter == -73)
    }

    @Test func levelsTakeAnotherAllowanceAndHysteresis() throws {
        // The frontier's grid (`simulate --frontier --teach`) sets both; the defaults are `levels`.
        let link = TaughtRegionLink(boundary: TaughtLevel(level: -75, spread: 2, reports: 30, seconds: 30))
        let other = try #require(link.levels(enterAllowance: 0.5, hysteresis: 7))
        #expect(other.enter == -75.5 && other.exit == -82.5)
        let defaults = try #require(
            link.levels(
                enterAllowance: TaughtRegionLink.taughtEnterAllowance,
                hysteresis: TaughtRegionLink.boundaryOnlyHysteresis))
        #expect(defaults.enter == link.levels?.enter && defaults.exit == link.levels?.exit)
        #expect(TaughtRegionLink().levels(enterAllowance: 0, hysteresis: 5) == nil)
    }

    @Test func qualityNamesWhatIsMissing() {
        let good = TaughtLevel(level: -75, spread: 2, reports: 30, seconds: 30)
        #expect(TeachQuality(spot: .boundary, level: good).isGood)
        #expect(TeachQuality(spot: .inside, level: nil).needs == ["inside: not taught (no report heard)"])
        let few = TeachQuality(spot: .boundary, level: TaughtLevel(level: -75, spread: 2, reports: 5, seconds: 5))
        #expect(few.needs.count == 1 && few.needs[0].hasPrefix("boundary: 5 reports"))
        let noisy = TeachQuality(spot: .boundary, level: TaughtLevel(level: -75, spread: 9, reports: 40, seconds: 30))
        #expect(noisy.needs.count == 1 && noisy.needs[0].hasPrefix("boundary: spread 9 dB"))
        let close = TeachQuality(
            link: TaughtRegionLink(boundary: good, inside: TaughtLevel(level: -74, spread: 3, reports: 30, seconds: 30))
        )
        #expect(close.needs.count == 1 && close.needs[0].hasPrefix("inside is only 1 dB above the boundary"))
    }

    @Test func recorderMeasuresTheStepBetweenItsHalves() throws {
        // 30 s at 1 Hz, the second half 10 dB down (a body stepped between half way): the halves' medians.
        var recorder = LevelRecorder()
        for second in 0..<30 { recorder.add(rssi: (second < 15 ? -70 : -80) + (second % 3) - 1, at: Double(second)) }
        #expect(try #require(recorder.summary?.step) == -10)
        // Too few reports in a half for its median to mean anything: no step.
        var few = LevelRecorder()
        for second in 0..<8 { few.add(rssi: -70, at: Double(second)) }
        #expect(few.summary?.step == nil)
        // A level read back from the store has none either; shifting keeps it.
        let level = TaughtLevel(level: -75, spread: 2, reports: 30, seconds: 30, step: -9)
        #expect(level.shifted(by: 3).step == -9)
        #expect(TaughtLevel(level: -75, spread: 2, reports: 30, seconds: 30).step == nil)
    }

    @Test func qualityFlagsAStepOnlyWhenAskedTo() {
        let dropped = TaughtLevel(level: -75, spread: 5, reports: 30, seconds: 30, step: -9.5)
        // The product's figure (`TeachQuality.Checks.standard`) judges by spread: 5 dB is within it.
        #expect(TeachQuality(spot: .boundary, level: dropped).isGood)
        let step = TeachQuality(spot: .boundary, level: dropped, checks: .step)
        #expect(
            step.needs == [
                "boundary: the level dropped 9.5 dB half way through: someone may have stood between the device and "
                    + "the gateway for part of the teach; teach again with the space between them clear"
            ])
        let rose = TeachQuality(
            spot: .inside, level: TaughtLevel(level: -70, spread: 7, reports: 30, seconds: 30, step: 8),
            checks: [.spread, .step])
        #expect(rose.needs.count == 2 && rose.needs[1].hasPrefix("inside: the level rose 8 dB half way through"))
        // Below `maximumStep` (a turning hold's postures, σ 3 dB between its halves), or unknown: good.
        for quiet in [-7.5, 7.9, nil] as [Double?] {
            let level = TaughtLevel(level: -75, spread: 3, reports: 30, seconds: 30, step: quiet)
            #expect(TeachQuality(spot: .boundary, level: level, checks: .step).isGood)
        }
        let link = TaughtRegionLink(boundary: dropped)
        #expect(TeachQuality(link: link, checks: .step).needs.count == 1)
    }
}
