import BeaconDelivery
import Testing

@testable import MQTTPublisher

/// The publisher's inbox stays bounded when a producer outpaces its consumer: ticks and Home Assistant status
/// messages waiting are superseded by newer ones, everything else keeps its place and order.
@Suite struct PublisherInboxBoundTests {
    static let status = "homeassistant/status"

    @Test func aFloodOfStatusMessagesAndTicksLeavesTheNewestOfEach() {
        let inbox = PublisherInbox()
        // The owner is busy (not waiting in the inbox, no wake-up given): everything put now waits.
        inbox.put(.client(.connected))
        for index in 0..<10_000 {
            inbox.put(.tick)
            inbox.put(
                .client(.message(topic: Self.status, payload: Array((index % 2 == 0 ? "online" : "offline").utf8))))
        }
        inbox.put(.acknowledgements)
        var waiting: [EventPublisher.Input] = []
        inbox.take(into: &waiting)
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
    }

    @Test func connectionEventsAndMessagesOnOtherTopicsAreAllKeptInOrder() {
        let inbox = PublisherInbox()
        inbox.put(.client(.connected))
        inbox.put(.client(.message(topic: "a", payload: [1])))
        inbox.put(
            .client(
                .disconnected(
                    TransportFailure(transport: "MQTT", operation: "test", code: 7, message: "lost"), retryIn: 1)))
        inbox.put(.client(.message(topic: "b", payload: [2])))
        inbox.put(.client(.connected))
        var waiting: [EventPublisher.Input] = []
        inbox.take(into: &waiting)
        #expect(waiting.count == 5)
    }

    /// A burst of acknowledgements from the network thread is one input; the list holds them all, in order.
    @Test func aBurstOfAcknowledgementsIsOneInput() {
        let inbox = PublisherInbox()
        for id in Int32(1)...100 { inbox.acknowledge(id, reasonCode: id == 50 ? 0x87 : 0, at: 1000 + Double(id)) }
        var waiting: [EventPublisher.Input] = []
        inbox.take(into: &waiting)
        #expect(waiting.count == 1)
        if case .acknowledgements = waiting.first {} else { Issue.record("waiting: \(waiting)") }
        var acknowledgements: [PublisherInbox.Acknowledgement] = []
        inbox.takeAcknowledgements(into: &acknowledgements)
        #expect(acknowledgements.map(\.messageID) == Array(1...100))
        #expect(acknowledgements[49].reasonCode == 0x87)
        #expect(acknowledgements[49].at == 1050, "each keeps its arrival time (the latency histogram's end)")
        // The next one is announced again.
        inbox.acknowledge(101, reasonCode: 0, at: 1101)
        inbox.take(into: &waiting)
        #expect(waiting.count == 1)
    }
}
