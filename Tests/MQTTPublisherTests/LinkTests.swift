import TestSupport
import Testing

@testable import MQTTPublisher

@Test func libmosquittoLinks() {
    #expect(MQTTLibrary.version.0 == 2)
}
