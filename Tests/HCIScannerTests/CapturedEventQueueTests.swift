import BeaconCore
@testable import HCIScanner
import Testing

@Suite struct CapturedEventQueueTests {
    @Test func overloadDropsTheOldestAndCountsThem() async {
        let queue = CapturedEventQueue(capacity: 3)
        for index in 0..<10 {
            queue.push(CapturedHCIEvent(timestamp: Double(index), bytes: [0x3E, 0x01, UInt8(index)]))
        }
        queue.finish()
        var received: [Double] = []
        for await event in queue.stream { received.append(event.timestamp) }
        #expect(received == [7, 8, 9])
        #expect(queue.dropped == 7)
        #expect(queue.delivered == 10)
    }

    @Test func aConsumerThatKeepsUpLosesNothing() async {
        let queue = CapturedEventQueue(capacity: 2)
        var received = 0
        for index in 0..<100 {
            queue.push(CapturedHCIEvent(timestamp: Double(index), bytes: [0x3E]))
            var iterator = queue.stream.makeAsyncIterator()
            if await iterator.next() != nil { received += 1 }
        }
        #expect(received == 100)
        #expect(queue.dropped == 0)
    }

    @Test func pushAfterFinishIsRefused() {
        let queue = CapturedEventQueue(capacity: 2)
        queue.finish()
        #expect(!queue.push(CapturedHCIEvent(timestamp: 0, bytes: [0x3E])))
    }
}
