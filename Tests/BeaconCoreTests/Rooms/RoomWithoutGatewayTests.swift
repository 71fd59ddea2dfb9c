import TestSupport
import Testing

@testable import BeaconConfigReading
@testable import BeaconEvents
@testable import BeaconModel
@testable import BeaconRooms

/// A room that no gateway stands in (issue 43; docs/rooms.md, "Rooms without a gateway"): rooms a, b, c in a
/// row, gateways in a and c only. The trained classifier names b from its fingerprint (its levels at a's and c's
/// gateways); the level rule, which names a room by its own gateways, cannot.
@Suite(.ownThread) struct RoomWithoutGatewayTests {
    typealias Base = RoomClassifierTests
    static let t0 = Base.t0
    /// `Base.feed` feeds gw-a, gw-b, gw-c by index: gw-b is never heard here (nil), it does not exist.
    static let settings: RoomArbiterSettings = {
        var settings = RoomArbiterSettings(gatewayRooms: ["gw-a": "a", "gw-c": "c"])
        settings.roomsWithoutGateway = ["b"]
        settings.classifier.enabled = true
        return settings
    }()

    /// The trained levels at gw-a and gw-c: b, in the middle, hears both through a wall.
    static let trained: [String: (Double, Double)] = ["a": (-55, -86), "b": (-70, -72), "c": (-86, -55)]

    static let book = FingerprintBook(
        ["a", "b", "c"].map { room in
            let (a, c) = trained[room] ?? (0, 0)
            func level(_ mean: Double) -> RoomFingerprint.Level {
                RoomFingerprint.Level(
                    mean: mean, spread: mean > -60 ? 4 : 5, samples: 60, heardShare: mean < -80 ? 0.6 : 1)
            }
            return RoomFingerprint(
                room: room, levels: ["gw-a": level(a), "gw-c": level(c)], seconds: 60, walks: 1,
                recorded: t0 - 3_600)
        })

    static func arbiter(_ settings: RoomArbiterSettings = settings, book: FingerprintBook = book) -> RoomArbiter {
        var arbiter = RoomArbiter(settings: settings)
        arbiter.setFingerprints(book)
        return arbiter
    }

    /// A room's trained levels with `noise` dB of seeded noise per report (gw-b: nil).
    static func at(_ room: String, noise: Double, _ generator: inout SeededGenerator) -> [Double?] {
        let (a, c) = trained[room] ?? (0, 0)
        return [a + noise * Base.normal(&generator), nil, c + noise * Base.normal(&generator)]
    }

    @Test func theClassifierNamesTheRoomWithoutAGatewayForABeaconRestingThere() throws {
        var arbiter = Self.arbiter()
        var generator = SeededGenerator(seed: 11)
        let changes = Base.feed(&arbiter, from: 0, to: 600) { _ in Self.at("b", noise: 3, &generator) }
        #expect(arbiter.decidesByFingerprints)
        #expect(changes.map(\.to) == ["b"], "\(changes)")
        let first = try #require(changes.first)
        #expect(first.time - Self.t0 <= 3)
        #expect(first.gatewayID == nil, "no gateway of b heard it")
        #expect(arbiter.room(of: "tag") == .some("b"))
        let probabilities = arbiter.probabilities(of: "tag")
        #expect(Set(probabilities.keys) == ["a", "b", "c"])
        #expect(probabilities["b"] ?? 0 > 0.9, "\(probabilities)")
    }

    @Test func theLevelRuleNeverNamesIt() {
        // The same stream, the classifier off: the rule picks the louder of a and c, never b.
        var settings = Self.settings
        settings.classifier.enabled = false
        var arbiter = Self.arbiter(settings)
        var generator = SeededGenerator(seed: 11)
        let changes = Base.feed(&arbiter, from: 0, to: 600) { _ in Self.at("b", noise: 3, &generator) }
        #expect(!arbiter.decidesByFingerprints)
        #expect(!changes.isEmpty && !changes.contains { $0.to == "b" }, "\(changes)")
        #expect(arbiter.room(of: "tag") == .some("a") || arbiter.room(of: "tag") == .some("c"))
    }

    @Test func undeclaredTheRoomIsNotACandidateEvenTrained() {
        // b trained but not declared a room of the site: the classifier decides among a and c only.
        var settings = Self.settings
        settings.roomsWithoutGateway = []
        var arbiter = Self.arbiter(settings)
        var generator = SeededGenerator(seed: 11)
        let changes = Base.feed(&arbiter, from: 0, to: 120) { _ in Self.at("b", noise: 3, &generator) }
        #expect(arbiter.decidesByFingerprints)
        #expect(Set(arbiter.probabilities(of: "tag").keys) == ["a", "c"])
        #expect(!changes.isEmpty && !changes.contains { $0.to == "b" }, "\(changes)")
    }

    @Test func declaredButUntrainedTheRuleDecides() {
        var arbiter = Self.arbiter(book: FingerprintBook(Self.book.rooms.values.filter { $0.room != "b" }))
        #expect(!arbiter.decidesByFingerprints)
        var generator = SeededGenerator(seed: 12)
        let changes = Base.feed(&arbiter, from: 0, to: 120) { _ in Self.at("a", noise: 1, &generator) }
        #expect(changes.map(\.to) == ["a"])
        #expect(arbiter.probabilities(of: "tag").isEmpty)
    }

    @Test func aWalkOutOfItIntoARoomWithAGatewayIsFollowed() throws {
        var arbiter = Self.arbiter()
        var generator = SeededGenerator(seed: 13)
        _ = Base.feed(&arbiter, from: 0, to: 300) { _ in Self.at("b", noise: 3, &generator) }
        let walk = Base.feed(&arbiter, from: 300, to: 360) { _ in Self.at("c", noise: 3, &generator) }
        #expect(walk.map(\.from) == ["b"] && walk.map(\.to) == ["c"], "\(walk)")
        let change = try #require(walk.first)
        #expect(change.time - Self.t0 - 300 <= 15)
        #expect(change.gatewayID == "gw-c")
    }

    /// Training (the coordinator): a declared room without a gateway is trained, published and read back by
    /// another gateway like any room; undeclared, the command and the retained fingerprint are refused, and the
    /// fingerprint is read once a reload declares the room.
    @Test func aRoomWithoutAGatewayIsTrainedAndItsFingerprintShared() throws {
        typealias Training = RoomTrainingTests
        func coordinator(_ id: String, declared: Bool) -> RoomCoordinator {
            var settings = RoomCoordinatorTests.settings
            if declared { settings.roomsWithoutGateway = ["office"] }
            return RoomCoordinator(gatewayID: id, topics: Training.topics, settings: settings, leaderSettle: 2)
        }
        var b = coordinator("gw-b", declared: true)
        #expect(b.siteRooms == ["a", "b", "c", "office"])
        _ = b.command(
            verb: "train", payload: Array(#"{"room":"office","device":"tag","seconds":10}"#.utf8), now: Self.t0)
        let effects = try Training.walk(&b, from: Self.t0, seconds: 13)
        let published = try #require(Training.fingerprints(effects).first)
        #expect(published.room == "office")
        #expect(Training.replies(effects).first?.json["state"] == .string("done"))
        #expect(b.arbiter.fingerprints["office"]?.levels.keys.sorted() == ["gw-a", "gw-b", "gw-c"])

        let message = InboundMessage(
            topic: Training.topics.fingerprint(room: "office"), payload: Array(published.payload.utf8))
        var c = coordinator("gw-c", declared: true)
        _ = c.receive(message, wall: 0)
        #expect(c.arbiter.fingerprints["office"] != nil && c.counters.malformed == 0)

        var undeclared = coordinator("gw-c", declared: false)
        _ = undeclared.receive(message, wall: 0)
        #expect(undeclared.arbiter.fingerprints.isEmpty && undeclared.counters.malformed == 1)
        let refused = undeclared.command(
            verb: "train", payload: Array(#"{"room":"office","device":"tag"}"#.utf8), now: Self.t0)
        #expect(Training.replies(refused).first?.json["ok"] == .bool(false), "\(Training.replies(refused))")
        #expect(undeclared.trainingWalk == nil)

        // A reload that declares the room reads the fingerprint refused before (the broker sends a retained
        // message once per subscription); a reload without it does not, and an empty retained message drops it.
        var reloaded = RoomCoordinatorTests.settings
        _ = undeclared.reconfigure(settings: reloaded, leaderSettle: 2, wall: 1)
        #expect(undeclared.arbiter.fingerprints.isEmpty)
        reloaded.roomsWithoutGateway = ["office"]
        _ = undeclared.reconfigure(settings: reloaded, leaderSettle: 2, wall: 2)
        #expect(undeclared.arbiter.fingerprints["office"] == c.arbiter.fingerprints["office"])
        #expect(undeclared.counters.fingerprintsRead == 1)
        var emptied = coordinator("gw-c", declared: false)
        _ = emptied.receive(message, wall: 0)
        _ = emptied.receive(InboundMessage(topic: message.topic, payload: []), wall: 1)
        _ = emptied.reconfigure(settings: reloaded, leaderSettle: 2, wall: 2)
        #expect(emptied.arbiter.fingerprints.isEmpty)
    }
}
