import Testing

@testable import SecureDFU

/// Progress over MQTT at most every second or 5 %: the first report, then one per second or per 5 %, always
/// 100 %, never the same percentage twice.
@Suite struct DFUProgressThrottleTests {
    func progress(_ percent: Int) -> DFUProgress {
        DFUProgress(bytes: percent * 100, totalBytes: 10_000, percent: percent, bytesPerSecond: nil)
    }

    @Test func boundsTheMessages() {
        var throttle = DFUProgressThrottle()
        // A receipt every 10 ms, 1 % each: 100 reports in 1 s.
        var sent: [Int] = []
        for percent in 1...100 where throttle.admit(progress(percent), at: Double(percent) * 0.01) {
            sent.append(percent)
        }
        #expect(sent == [1, 6, 11, 16, 21, 26, 31, 36, 41, 46, 51, 56, 61, 66, 71, 76, 81, 86, 91, 96, 100])
    }

    @Test func slowTransfersReportEverySecond() {
        var throttle = DFUProgressThrottle()
        let steps: [(percent: Int, time: Double, sent: Bool)] = [
            (1, 0, true), (2, 0.5, false), (3, 1.0, true), (3, 5.0, false), (4, 5.0, true), (5, 5.2, false),
            (100, 5.3, true),
        ]
        for step in steps {
            let sent = throttle.admit(progress(step.percent), at: step.time)
            #expect(sent == step.sent, "\(step)")
        }
    }
}
