import Testing

@testable import BeaconConfigReading
@testable import BeaconModel
@testable import BeaconRooms

/// The fingerprint margin rule (issue 43; docs/rooms.md, "Session 29"): the level rule's smoothing, margins and
/// dwells, with rooms scored by the distance to their fingerprint means. Hand-made levels, every gateway heard once
/// a second without noise, so each figure can be worked out by hand.
@Suite struct RoomFingerprintRuleTests {
    static let t0: Timestamp = 1_700_000_000

    static func settings(_ rooms: [String: String], rule: Bool = true) -> RoomArbiterSettings {
        var settings = RoomArbiterSettings(gatewayRooms: rooms)
        settings.classifier.rule = rule
        settings.classifier.ruleOffset = .none
        return settings
    }

    /// A fingerprint with these means (nil: the walk did not hear that gateway).
    static func fingerprint(_ room: String, _ means: [String: Double]) -> RoomFingerprint {
        RoomFingerprint(
            room: room,
            levels: means.mapValues { RoomFingerprint.Level(mean: $0, spread: 4, samples: 60, heardShare: 1) },
            seconds: 60, walks: 1, recorded: t0 - 3_600)
    }

    /// Feeds each gateway's level (nil or absent: not heard) once a second from `from` to `to` (scenario seconds),
    /// ticking every second; returns the changes.
    static func feed(
        _ arbiter: inout RoomArbiter, from: Int, to: Int, levels: [String: Double?]
    ) -> [RoomChange] {
        feed(&arbiter, from: from, to: to) { _ in levels }
    }

    static func feed(
        _ arbiter: inout RoomArbiter, from: Int, to: Int, levels: (Int) -> [String: Double?]
    ) -> [RoomChange] {
        var changes: [RoomChange] = []
        for second in from..<to {
            let time = t0 + Double(second)
            let now = levels(second)
            for (index, gateway) in now.keys.sorted().enumerated() {
                guard let level = now[gateway] ?? nil else { continue }
                changes += arbiter.process(
                    RoomSighting(gatewayID: gateway, beaconID: "tag", time: time + 0.1 * Double(index), rssi: level))
            }
            changes += arbiter.advance(to: time + 0.9)
        }
        return changes
    }

    /// b's walk heard gw-a almost as loud as its own gateway (gw-a stands by the shared wall): a beacon at b's levels
    /// is loudest at gw-a, so the level rule names a, and the nearer fingerprint is b's.
    @Test func theNearerFingerprintWinsWhereTheLoudestGatewayIsAnotherRooms() {
        let rooms = ["gw-a": "a", "gw-b": "b"]
        let book = FingerprintBook([
            Self.fingerprint("a", ["gw-a": -60, "gw-b": -80]), Self.fingerprint("b", ["gw-a": -62, "gw-b": -66]),
        ])
        let spot: [String: Double?] = ["gw-a": -63, "gw-b": -67]
        var margin = RoomArbiter(settings: Self.settings(rooms))
        margin.setFingerprints(book)
        #expect(margin.decidesByFingerprints && margin.decidesByFingerprintRule)
        #expect(Self.feed(&margin, from: 0, to: 120, levels: spot).map(\.to) == ["b"])
        #expect(margin.probabilities(of: "tag").isEmpty, "the rule has no probabilities")
        // The level rule on the same book and levels (the margin rule off): a.
        var level = RoomArbiter(settings: Self.settings(rooms, rule: false))
        level.setFingerprints(book)
        #expect(!level.decidesByFingerprints)
        #expect(Self.feed(&level, from: 0, to: 120, levels: spot).map(\.to) == ["a"])
        // The classifier takes precedence when both are on.
        var both = Self.settings(rooms)
        both.classifier.enabled = true
        var classifier = RoomArbiter(settings: both)
        classifier.setFingerprints(book)
        #expect(classifier.decidesByFingerprints && !classifier.decidesByFingerprintRule)
    }

    /// Two symmetric rooms (12 dB apart on each gateway: the lead is the position past the midpoint in dB). A beacon
    /// that leaves a's levels for a spot 1 dB past the midpoint towards b (lead 1 dB, under the slow margin's 2 dB and
    /// the fast margin's 8 dB) stays in a for five minutes; moved on to 2 dB beyond b's levels (lead 16 dB, gw-b
    /// risen 7.5 dB above its median) it goes to b on the fast path, after the dwell.
    @Test func aMarginHoldsTheCurrentRoomUntilTheChallengerLeadsByIt() throws {
        let rooms = ["gw-a": "a", "gw-b": "b"]
        var arbiter = RoomArbiter(settings: Self.settings(rooms))
        arbiter.setFingerprints(
            FingerprintBook([
                Self.fingerprint("a", ["gw-a": -60, "gw-b": -72]), Self.fingerprint("b", ["gw-a": -72, "gw-b": -60]),
            ]))
        #expect(Self.feed(&arbiter, from: 0, to: 90, levels: ["gw-a": -60, "gw-b": -72]).map(\.to) == ["a"])
        let held = Self.feed(&arbiter, from: 90, to: 390, levels: ["gw-a": -66.5, "gw-b": -65.5])
        #expect(held.isEmpty, "\(held)")
        let moved = Self.feed(&arbiter, from: 390, to: 420, levels: ["gw-a": -74, "gw-b": -58])
        #expect(moved.map(\.to) == ["b"])
        let change = try #require(moved.first)
        #expect(change.time - Self.t0 - 390 >= arbiter.settings.dwell)
        #expect(change.time - Self.t0 - 390 < arbiter.settings.dwell + 4, "the fast path, not the slow one")
        #expect(change.gatewayID == "gw-b")
    }

    /// c's walk heard its own gateway loud, b's walk never heard gw-c. A beacon that hears gw-a at −75 and gw-b at −70
    /// and not gw-c is nearest to c over the gateways heard now (12.5 dB² against b's 50), but gw-c's silence counts
    /// against c (its walk had it at −60: 40 dB above the −100 dBm of a gateway not heard) and not against b (silent
    /// on both sides): b.
    @Test func aGatewayNotHeardCountsAgainstTheRoomWhoseWalkHeardIt() {
        let rooms = ["gw-a": "a", "gw-b": "b", "gw-c": "c"]
        var arbiter = RoomArbiter(settings: Self.settings(rooms))
        arbiter.setFingerprints(
            FingerprintBook([
                Self.fingerprint("a", ["gw-a": -60, "gw-b": -75, "gw-c": -75]),
                Self.fingerprint("b", ["gw-a": -75, "gw-b": -60]),
                Self.fingerprint("c", ["gw-a": -75, "gw-b": -75, "gw-c": -60]),
            ]))
        #expect(Self.feed(&arbiter, from: 0, to: 60, levels: ["gw-a": -75, "gw-b": -70]).map(\.to) == ["b"])
    }

    /// A device 10 dB quieter than the trainer at a's levels: with no offset taken out it is nearer b's quieter
    /// levels; with the per-room mean difference out (`differences`), a. With the offset learned from the decided
    /// room (`learned`), a beacon placed in a whose level sinks by 1 dB a minute for ten minutes (slower than the
    /// offset's 60 s) stays in a and its offset follows; with none taken out it goes to b.
    @Test func theOffsetModesTakeADevicesOwnLevelOut() {
        let rooms = ["gw-a": "a", "gw-b": "b"]
        let book = FingerprintBook([
            Self.fingerprint("a", ["gw-a": -60, "gw-b": -70]), Self.fingerprint("b", ["gw-a": -72, "gw-b": -78]),
        ])
        let quiet: [String: Double?] = ["gw-a": -70, "gw-b": -80]
        var first: [RoomClassifierSettings.RuleOffset: [String?]] = [:]
        var sinking: [RoomClassifierSettings.RuleOffset: [String?]] = [:]
        for mode in RoomClassifierSettings.RuleOffset.allCases {
            var settings = Self.settings(rooms)
            settings.classifier.ruleOffset = mode
            var arbiter = RoomArbiter(settings: settings)
            arbiter.setFingerprints(book)
            first[mode] = Self.feed(&arbiter, from: 0, to: 60, levels: quiet).map(\.to)
            var drifting = RoomArbiter(settings: settings)
            drifting.setFingerprints(book)
            sinking[mode] =
                Self.feed(&drifting, from: 0, to: 1_200) { second in
                    let down = min(10, max(0, Double(second - 60) / 60))
                    return ["gw-a": -60 - down, "gw-b": -70 - down]
                }.map(\.to)
            if mode == .learned { #expect(abs((drifting.deviceOffset(of: "tag") ?? 0) + 10) < 1) }
        }
        #expect(first[RoomClassifierSettings.RuleOffset.none] == ["b"])
        #expect(first[.differences] == ["a"])
        #expect(sinking[.learned] == ["a"], "\(sinking)")
        #expect(sinking[.differences] == ["a"])
        #expect(sinking[RoomClassifierSettings.RuleOffset.none] == ["a", "b"])
    }

    @Test func theKeysAreReadAndABadOffsetModeIsAnIssue() {
        let section = ConfigNode.mapping([
            ConfigEntry(key: "fingerprint_rule", value: .scalar("true")),
            ConfigEntry(key: "fingerprint_rule_offset", value: .scalar("learned")),
        ])
        var reader = ConfigReader(section, path: ConfigPath(parsing: "rooms"))
        let read = RoomSettings(from: &reader).arbiter.classifier
        #expect(reader.issues.isEmpty)
        #expect(read.rule && read.ruleOffset == .learned && !read.enabled)
        #expect(!RoomClassifierSettings().rule && RoomClassifierSettings().ruleOffset == .differences)
        let bad = ConfigNode.mapping([ConfigEntry(key: "fingerprint_rule_offset", value: .scalar("mean"))])
        var badReader = ConfigReader(bad, path: ConfigPath(parsing: "rooms"))
        _ = RoomSettings(from: &badReader)
        #expect(badReader.issues.map(\.path).contains("rooms.fingerprint_rule_offset"), "\(badReader.issues)")
    }
}
