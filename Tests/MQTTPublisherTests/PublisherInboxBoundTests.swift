import BeaconCore
import Testing

@testable import MQTTPublisher

/// The publisher's inbox stays bounded when a producer outpaces its consumer: ticks and Home Assistant status
/// messages waiting are superseded by newer ones, everything else keeps its place and order.
@Suite struct PublisherInboxBoundTests {
    static let status = "homeassistant/status"

    @Test func aFloodOfStatusMessagesAndTicksLeavesTheNewestOfEach() {
        let inbox = PublisherInbox()
        #expect(inbox.tryHold())  // the consumer is busy: everything put now waits
        inbox.put(.client(.connected))
        for index in 0..<10_000 {
            inbox.put(.tick)
            inbox.put(
                .client(.message(topic: Self.status, payload: Array((index % 2 == 0 ? "online" : "offline").utf8))))
        }
        inbox.put(.acknowledgements)
        let waiting = inbox.takeHeld() ?? []
        #expect(waiting.count == 4)
        guard waiting.count == 4 else { return }
        if case .client(.connected) = waiting[0] {} else { Issue.record("first: \(waiting[0])") }
        if case .tick = waiting[1] {} else { Issue.record("second: \(waiting[1])") }
        if case let .client(.message(topic, payload)) = waiting[2] {
            #expect(topic == Self.status)
            #expect(String(decoding: payload, as: UTF8.self) == "offline")  // the newest
        } else {
            Issue.record("third: \(waiting[2])")
        }
        if case .acknowledgements = waiting[3] {} else { Issue.record("fourth: \(waiting[3])") }
        inbox.unhold()
    }

    @Test func connectionEventsAndMessagesOnOtherTopicsAreAllKeptInOrder() {
        let inbox = PublisherInbox()
        #expect(inbox.tryHold())
        inbox.put(.client(.connected))
        inbox.put(.client(.message(topic: "a", payload: [1])))
        inbox.put(.client(.disconnected(MQTTError(operation: "test", code: 7, message: "lost"), retryIn: 1)))
        inbox.put(.client(.message(topic: "b", payload: [2])))
        inbox.put(.client(.connected))
        let waiting = inbox.takeHeld() ?? []
        #expect(waiting.count == 5)
        inbox.unhold()
    }
}
