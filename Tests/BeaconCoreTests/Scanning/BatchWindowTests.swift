import BeaconFormats
import Testing

/// The reading thread's pause after a hand-over: the time `targetEvents` take at the rate just seen, between the
/// configured bounds.
@Suite struct BatchWindowTests {
    let window = BatchWindow(minimum: 0.025, maximum: 0.1)

    @Test func aHighRateKeepsTheMinimum() {
        // 5,000 reports/s: 125 reports gathered in 25 ms.
        #expect(window.next(events: 125, elapsed: 0.025) == 0.025)
        // A full batch in a short time.
        #expect(window.next(events: 256, elapsed: 0.01) == 0.025)
    }

    @Test func aLowRateGrowsToTheMaximum() {
        // 500 reports/s: 50 reports in 100 ms would take 128 ms to reach 64.
        #expect(window.next(events: 50, elapsed: 0.1) == 0.1)
        // 100 reports/s over the minimum window.
        #expect(window.next(events: 3, elapsed: 0.025) == 0.1)
    }

    @Test func inBetweenTheWindowIsTheTimeTheTargetTakes() {
        // 1,000 reports/s: 100 reports in 100 ms, 64 take 64 ms; the next window then holds 64 and stays.
        let first = window.next(events: 100, elapsed: 0.1)
        #expect(abs(first - 0.064) < 1e-9)
        #expect(abs(window.next(events: 64, elapsed: first) - 0.064) < 1e-9)
    }

    @Test func theFirstReportAfterAQuietSpellOrNoMeasurableTimeMeansTheMaximum() {
        #expect(window.next(events: 1, elapsed: 30) == 0.1)
        #expect(window.next(events: 0, elapsed: 0.05) == 0.1)
        #expect(window.next(events: 10, elapsed: 0) == 0.1)
        #expect(window.next(events: 10, elapsed: -.infinity) == 0.1)
        #expect(window.next(events: 10, elapsed: .nan) == 0.1)
    }

    @Test func boundsAreSane() {
        // A maximum below the minimum: no growth.
        let fixed = BatchWindow(minimum: 0.05, maximum: 0.01)
        #expect(fixed.maximum == 0.05)
        #expect(fixed.next(events: 1, elapsed: 10) == 0.05)
        #expect(fixed.next(events: 1000, elapsed: 0.001) == 0.05)
        let broken = BatchWindow(minimum: -.infinity, maximum: .nan, targetEvents: 0)
        #expect(broken.minimum == 0)
        #expect(broken.maximum == 0)
        #expect(broken.targetEvents == 1)
        #expect(broken.next(events: 5, elapsed: 1) == 0)
    }
}
