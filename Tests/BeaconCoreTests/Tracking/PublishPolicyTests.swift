import Testing

@testable import BeaconTracking

@Suite struct PublishPolicyTests {
    typealias F = EngineFixtures

    @Test func policyRules() {
        let policy = PublishPolicy(sightingInterval: 5, sightingMinDistance: 0.5)
        #expect(policy.isDue(now: 0, distance: 1, lastTime: nil, lastDistance: nil, regionChanged: false))
        #expect(!policy.isDue(now: 4, distance: 1.4, lastTime: 0, lastDistance: 1, regionChanged: false))
        #expect(policy.isDue(now: 4, distance: 1.6, lastTime: 0, lastDistance: 1, regionChanged: false))
        #expect(policy.isDue(now: 5, distance: 1, lastTime: 0, lastDistance: 1, regionChanged: false))
        #expect(policy.isDue(now: 1, distance: 1, lastTime: 0, lastDistance: 1, regionChanged: true))
        #expect(!policy.isDue(now: 1, distance: nil, lastTime: 0, lastDistance: nil, regionChanged: false))
    }

    @Test func aSteadyBeaconPublishesOncePerInterval() {
        var engine = F.engine(regions: [])
        let sightings = F.sightings(F.feed(&engine, from: 0, to: 60, rssi: -70))
        #expect(sightings.count == 12)
        #expect(
            sightings.map(\.time).enumerated().allSatisfy { abs($0.element - (F.t0 + Double($0.offset) * 5)) < 0.11 })
    }

    @Test func aMovingBeaconPublishesEarlierAndARegionChangeAlways() {
        var engine = F.engine()
        var events = F.feed(&engine, from: 0, to: 3, rssi: -90)
        #expect(F.sightings(events).count == 1)
        // Jumping from −90 to −50 dBm moves the distance by metres within a report and enters "hall".
        events = F.feed(&engine, from: 3, to: 8.5, rssi: -50)
        let enterTime = F.regionEvents(events).first { $0.kind == .enter }?.time
        #expect(F.sightings(events).count >= 2)
        #expect(F.sightings(events).contains { $0.time == enterTime }, "the region change forces a sighting")
    }
}
