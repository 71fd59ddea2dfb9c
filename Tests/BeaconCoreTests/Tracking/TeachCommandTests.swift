import Testing

@testable import BeaconModel
@testable import BeaconTracking

/// The teach command, the taught records and the book (issue 43): every field checked, refusals naming it.
@Suite struct TeachCommandTests {
    static let regions: Set = ["desk", "hall"]

    static func parse(_ verb: String, _ text: String) -> Result<TeachCommand, TeachCommand.Failure> {
        TeachCommand.parse(verb: verb, payload: Array(text.utf8), regions: regions)
    }

    @Test func readsATeachWithItsDefaults() throws {
        let command = try Self.parse("teach", #"{"id":"t1","region":"desk","device":"ibeacon:x:1:2","at":"inside"}"#)
            .get()
        #expect(command == .teach(id: "t1", region: "desk", device: "ibeacon:x:1:2", spot: .inside, seconds: 30))
        let oneMetre = try Self.parse("teach", #"{"device":"d","at":"1m","seconds":12}"#).get()
        #expect(oneMetre == .teach(id: nil, region: nil, device: "d", spot: .oneMetre, seconds: 12))
        #expect(
            try Self.parse("forget", #"{"region":"hall","device":"d"}"#).get()
                == .forget(id: nil, region: "hall", device: "d"))
    }

    @Test(arguments: [
        ("teach", #"{"region":"attic","device":"d","at":"boundary"}"#, "unknown_region", "region"),
        ("teach", #"{"region":"desk","at":"boundary"}"#, "bad_request", "device"),
        ("teach", #"{"region":"desk","device":"d","at":"sofa"}"#, "bad_request", "at"),
        ("teach", #"{"region":"desk","device":"d","at":"inside","seconds":600}"#, "bad_request", "seconds"),
        ("teach", #"{"region":"desk","device":"d","at":"inside","seconds":"30"}"#, "bad_request", "seconds"),
        ("teach", #"{"device":"d","at":"boundary"}"#, "bad_request", "region"),
        ("teach", #"{"region":"desk","device":"d","at":"inside","colour":1}"#, "bad_request", "colour"),
        ("teach", #"[1,2]"#, "bad_request", "payload"),
        ("teach", "\u{1}", "bad_request", "payload"),
        ("teach", #"{"id":"","region":"desk","device":"d","at":"inside"}"#, "bad_request", "id"),
        ("dance", #"{}"#, "unknown_operation", "topic"),
    ])
    func refusesNamingTheField(verb: String, text: String, kind: String, step: String) {
        guard case let .failure(failure) = Self.parse(verb, text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(failure.kind == kind)
        #expect(failure.step == step)
        #expect(!failure.message.isEmpty)
    }

    @Test func recordsRoundTripAndRefuseWhatIsNotOurs() throws {
        let level = TaughtLevel(level: -72.5, spread: 1.25, reports: 31, seconds: 29.8)
        let record = TaughtRecord(
            site: "bb", gateway: "gw-a", region: "desk", device: "ibeacon:x:1:2", levels: [.boundary: level],
            recorded: 1_700_000_030)
        let topic = record.topic(prefix: "bb")
        #expect(topic == "bb/regions/taught/gw-a/desk/ibeacon:x:1:2")
        let back = try TaughtRecord.parse(Array(record.json.utf8), site: "bb", regions: Self.regions, topic: topic)
            .get()
        #expect(back == record)
        #expect(back.link?.levels?.enter == TaughtRegionLink(boundary: level).levels?.enter)

        func refusal(_ text: String, site: String = "bb", topic: String? = nil) -> String? {
            if case let .failure(failure) = TaughtRecord.parse(
                Array(text.utf8), site: site, regions: Self.regions, topic: topic)
            {
                return failure.step
            }
            return nil
        }
        #expect(refusal(record.json, site: "other") == "site")
        #expect(refusal(record.json, topic: "bb/regions/taught/gw-b/desk/ibeacon:x:1:2") == "topic")
        #expect(refusal(record.json.replacing("\"desk\"", with: "\"attic\"")) == "region")
        #expect(refusal(record.json.replacing("-72.5", with: "-300")) == "levels")
        #expect(refusal(record.json.replacing("\"boundary\"", with: "\"1m\"")) == "levels")
        #expect(refusal("{\"kind\":\"taught\"") == "payload")
        #expect(refusal("{\"kind\":\"fingerprint\"}") == "kind")
    }

    @Test func theBookGivesEachGatewayItsOwnLinksAndTheLoudestReferencePower() {
        var book = TaughtBook(site: "bb")
        let level = { (dbm: Double) in TaughtLevel(level: dbm, spread: 1, reports: 30, seconds: 30) }
        book.put(
            TaughtRecord(
                site: "bb", gateway: "gw-a", region: "desk", device: "d", levels: [.boundary: level(-70)], recorded: 1))
        book.put(
            TaughtRecord(
                site: "bb", gateway: "gw-b", region: "desk", device: "d", levels: [.boundary: level(-80)], recorded: 1))
        book.put(
            TaughtRecord(
                site: "bb", gateway: "gw-a", region: nil, device: "d", levels: [.oneMetre: level(-62.4)], recorded: 1))
        book.put(
            TaughtRecord(
                site: "bb", gateway: "gw-b", region: nil, device: "d", levels: [.oneMetre: level(-75)], recorded: 1))
        let a = book.table(gateway: "gw-a")
        let enter = { (dbm: Double) in TaughtRegionLink(boundary: level(dbm)).levels?.enter }
        #expect(a.link(beaconID: "d", region: "desk")?.levels?.enter == enter(-70))
        #expect(a.referencePowers == ["d": -62])
        #expect(book.table(gateway: "gw-b").link(beaconID: "d", region: "desk")?.levels?.enter == enter(-80))
        // An inside alone sets no levels yet.
        book.put(
            TaughtRecord(
                site: "bb", gateway: "gw-c", region: "hall", device: "d", levels: [.inside: level(-50)], recorded: 1))
        #expect(book.table(gateway: "gw-c").links.isEmpty)
        #expect(book.remove(topic: "bb/regions/taught/gw-a/desk/d") != nil)
        #expect(book.table(gateway: "gw-a").links.isEmpty)
    }

    @Test func aTeachRecordsTheDeviceInItsWindowOnly() throws {
        typealias F = EngineFixtures
        var engine = F.engine()
        let recording = TeachRecording(
            id: "t", region: "hall", device: F.id(1), spot: .boundary, start: F.t0 + 10, seconds: 20)
        #expect(engine.startTeach(recording) == nil)
        #expect(engine.startTeach(recording) == "busy")
        var updates: [TeachUpdate] = []
        var t = 0.0
        while t < 40 {
            updates += engine.advanceTeaches(to: F.t0 + t)
            _ = engine.process(F.report(1, at: t, rssi: t < 20 ? -80 : -70))
            _ = engine.process(F.report(2, at: t, rssi: -40))
            t += 1
        }
        let progress = updates.filter { if case .progress = $0 { true } else { false } }
        #expect(progress.count == 3)
        guard case let .done(done)? = updates.last else {
            Issue.record("no end")
            return
        }
        let level = try #require(done.level)
        #expect(level.reports == 20)
        #expect(level.level == -75)
        #expect(engine.runningTeaches.isEmpty)
    }
}
