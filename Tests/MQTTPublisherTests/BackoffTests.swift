import BeaconDelivery
import TestSupport
import Testing

@testable import MQTTPublisher

@Suite struct BackoffTests {
    @Test func delaysGrowExponentiallyWithJitterAndStayCapped() {
        for attempt in 1...12 {
            let ceiling = min(8.0, 0.5 * Double(1 << (attempt - 1)))
            for _ in 0..<50 {
                let delay = MQTTClient.backoff(attempt: attempt, minimum: 0.5, maximum: 8)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay)")
            }
        }
        let samples = Set((0..<50).map { _ in MQTTClient.backoff(attempt: 6, minimum: 0.5, maximum: 8) })
        #expect(samples.count > 1, "jitter spreads reconnects")
    }

    /// Issue 10: after a long outage the delay is capped at the default 5 s, so the gateway and Home Assistant's
    /// entities are back within seconds of the broker, not the 30 s of the old default.
    @Test func theDefaultCapKeepsReconnectsWithinFiveSeconds() {
        let settings = MQTTSettings()
        #expect(settings.reconnectMax == 5)
        for attempt in [1, 5, 10, 40, 1000] {
            #expect(
                MQTTClient.backoff(attempt: attempt, minimum: settings.reconnectMin, maximum: settings.reconnectMax)
                    <= 5)
        }
    }
}
