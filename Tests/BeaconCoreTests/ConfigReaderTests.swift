import Testing

@testable import BeaconConfig
@testable import BeaconConfigReading
@testable import BeaconModel

/// Builds marked nodes in code: `at(l, c)` gives the place; keys get the same line, column 1 + indent.
private func at(_ line: Int, _ column: Int) -> SourceMark { SourceMark(line: line, column: column) }
private func scalar(_ text: String, _ line: Int, _ column: Int) -> ConfigNode { .scalar(text, at: at(line, column)) }
private func key(_ name: String, _ line: Int, _ column: Int, _ value: ConfigNode) -> ConfigEntry {
    ConfigEntry(key: name, keyMark: at(line, column), value: value)
}

@Suite struct ConfigReaderTests {
    @Test func collectsEveryProblemWithPlaceAndPath() {
        // telemetry:
        //   interval_s: fast
        //   enabeld: yes
        // logging: {level: loud}
        let root = ConfigNode.mapping(
            [
                key(
                    "telemetry", 1, 1,
                    .mapping(
                        [
                            key("interval_s", 2, 3, scalar("fast", 2, 15)),
                            key("enabeld", 3, 3, scalar("yes", 3, 12)),
                        ], at: at(2, 3))),
                key("logging", 4, 1, .mapping([key("level", 4, 11, scalar("loud", 4, 18))], at: at(4, 10))),
            ], at: at(1, 1))
        let (value, issues) = GatewayConfiguration.read(
            root, file: "b.yaml",
            environment: ConfigEnvironment(hostname: "pi.local"))
        #expect(value.gateway.id == "pi")
        #expect(
            issues.map(\.located) == [
                "b.yaml:2:15: telemetry.interval_s: `fast` is not a duration (use e.g. 30s, 500ms, 2m or 1h)",
                "b.yaml:3:3: telemetry.enabeld: unknown key `enabeld`; did you mean `enabled`?",
                "b.yaml:4:18: logging.level: `loud` is not one of debug, info, notice, warning, error",
            ])
    }

    @Test func topLevelTypoGetsSectionHint() {
        let root = ConfigNode.mapping([key("gatway", 1, 1, .mapping([])), key("mqt", 2, 1, .null())])
        let (_, issues) = GatewayConfiguration.read(root, file: nil, environment: ConfigEnvironment(hostname: ""))
        #expect(
            issues.map(\.message) == [
                "unknown key `gatway`; did you mean `gateway`?",
                "unknown key `mqt`; did you mean `mqtt`?",
            ])
        #expect(issues.map(\.path) == ["gatway", "mqt"])
    }

    @Test(arguments: [
        ("30", 30.0), ("30s", 30), ("500ms", 0.5), ("2m", 120), ("1h", 3600), ("1m30s", 90),
        ("1.5s", 1.5), ("0", 0),
    ])
    func durations(text: String, seconds: Double) {
        #expect(ConfigDuration.parse(text) == seconds)
    }

    @Test(arguments: ["", "s", "-5s", "5x", "1s30", "ms", ".5s", "1e3s", "inf", "30 seconds"])
    func notDurations(text: String) {
        #expect(ConfigDuration.parse(text) == nil)
    }

    @Test func durationRangeMessageUsesUnits() {
        var r = ConfigReader(.mapping(["t": .scalar("2s")]))
        #expect(r.duration("t", default: 60, in: 5...86_400) == 60)
        #expect(r.issues.map(\.message) == ["must be between 5s and 24h (got 2s)"])
    }

    @Test func booleansAcceptYAML11Spellings() {
        let words = ["true": true, "Yes": true, "ON": true, "false": false, "no": false, "Off": false]
        for (word, expected) in words {
            var r = ConfigReader(.mapping(["b": .scalar(word)]))
            #expect(r.bool("b", default: !expected) == expected)
            #expect(r.issues.isEmpty)
        }
        var r = ConfigReader(.mapping(["b": .scalar("maybe")]))
        #expect(r.bool("b", default: true) == true)
        #expect(r.issues.first?.message == "`maybe` is not a boolean (use true or false)")
    }

    @Test func stringsAreNotReinterpreted() {
        var r = ConfigReader(.mapping(["room": .scalar("no"), "port": .scalar("0x1F"), "n": .scalar("1_000")]))
        #expect(r.string("room") == "no")
        #expect(r.int("port", in: 0...65_535) == 31)
        #expect(r.int("n", in: 0...10_000) == 1000)
        #expect(r.issues.isEmpty)
    }

    @Test func numbersReportRangeAndType() {
        var r = ConfigReader(
            .mapping([
                "a": .scalar("70000"), "b": .scalar("1.5"), "c": .scalar("nan"),
                "d": .scalar("99999999999999999999"), "e": .mapping([]),
            ]))
        _ = r.int("a", default: 1883, in: 1...65_535)
        _ = r.int("b", default: 1, in: 0...10)
        _ = r.double("c", default: 1, in: 0...10)
        _ = r.int("d", default: 1, in: 0...10)
        _ = r.int("e", default: 1, in: 0...10)
        #expect(
            r.issues.map(\.message) == [
                "must be between 1 and 65535 (got 70000)", "`1.5` is not a whole number", "`nan` is not a number",
                "`99999999999999999999` is too large", "expected a whole number, found a mapping",
            ])
    }

    @Test func requiredKeysAndEmptyValues() {
        var r = ConfigReader(
            .mapping([key("host", 3, 3, .null(at: at(3, 8)))], at: at(2, 3)),
            path: ConfigPath.root.appending("mqtt"), mark: at(1, 1))
        _ = r.requiredString("host")
        _ = r.required("port", as: Int.self)
        #expect(
            r.issues.map(\.located) == [
                "3:3: mqtt.host: `host` needs a value (a string)",
                "1:1: mqtt.port: missing required key `port` (a whole number)",
            ])
    }

    @Test func wrongShapeSectionReportedOnceWithoutMissingKeyNoise() {
        var r = ConfigReader(.mapping([key("mqtt", 1, 1, scalar("localhost", 1, 7))], at: at(1, 1)))
        _ = r.section("mqtt") { m in m.requiredString("host") }
        r.reportUnknownKeys()
        #expect(r.issues.map(\.located) == ["1:7: mqtt: expected a mapping of keys, found a single value"])
    }

    @Test func listOfSectionsHasIndexedPaths() {
        let regions = ConfigNode.sequence(
            [
                .mapping([key("name", 2, 7, scalar("desk", 2, 13))], at: at(2, 5)),
                .mapping(
                    [
                        key("name", 4, 5, scalar("door", 4, 11)),
                        key("enter", 5, 5, .mapping([key("rssi_abov", 6, 7, scalar("-70", 6, 18))], at: at(6, 7))),
                    ],
                    at: at(4, 5)),
                scalar("oops", 7, 5),
            ], at: at(2, 3))
        var r = ConfigReader(.mapping([key("regions", 1, 1, regions)], at: at(1, 1)))
        let names = r.list("regions") { region -> String in
            _ = region.section("enter") { e in e.int("rssi_above", in: -127...20) }
            return region.requiredString("name") ?? "?"
        }
        #expect(names == ["desk", "door", "?"])
        #expect(
            r.issues.map(\.located) == [
                "6:7: regions[1].enter.rssi_abov: unknown key `rssi_abov`; did you mean `rssi_above`?",
                "7:5: regions[2]: expected a mapping of keys, found a single value",
            ])
    }

    @Test func scalarListsAndChoices() {
        enum Format: String, CaseIterable { case ibeacon, eddystone, altbeacon }
        var r = ConfigReader(
            .mapping([
                "f": .sequence([.scalar("ibeacon"), .scalar("edystone")]),
                "one": .scalar("altbeacon"), "n": .sequence([.scalar("1"), .scalar("x")]),
            ]))
        #expect(r.list("f", of: String.self).compactMap(Format.init(rawValue:)) == [.ibeacon])
        #expect(r.list("one", of: String.self) == ["altbeacon"])
        #expect(r.list("n", of: Int.self) == [1])
        let chosen: Format = r.choice("missing", default: .eddystone)
        #expect(chosen == .eddystone)
        var c = ConfigReader(.mapping(["f": .scalar("edystone")]))
        #expect(c.choice("f", as: Format.self) == nil)
        #expect(
            c.issues.first?.message
                == "`edystone` is not one of ibeacon, eddystone, altbeacon; did you mean `eddystone`?")
        #expect(r.issues.map(\.path) == ["n[1]"])
    }

    @Test func hexAndUUID() {
        var r = ConfigReader(
            .mapping([
                "company": .scalar("0x004C"), "mac": .scalar("de:ad:be:ef:00:01"),
                "u": .scalar("2F234454CF6D4A0FADF2F4911BA9FFA6"), "bad": .scalar("2f23-44"),
                "short": .scalar("0x01"),
            ]))
        #expect(r.hexBytes("company", count: 2...2) == [0x00, 0x4C])
        #expect(r.hexBytes("mac", count: 6...6) == [0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01])
        #expect(r.uuid("u") == "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")
        #expect(r.uuid("bad") == nil)
        #expect(r.hexBytes("short", count: 2...2) == nil)
        #expect(r.issues.map(\.path) == ["bad", "short"])
        #expect(r.issues.last?.message == "must be 2 bytes (got 1)")
    }

    @Test func namedSectionsAndAdoptedIssues() {
        let formats = ConfigNode.mapping(
            [
                key("my.layout", 2, 3, .mapping([key("layout", 3, 5, scalar("m:2-3=beac", 3, 13))], at: at(3, 5)))
            ], at: at(2, 3))
        var r = ConfigReader(.mapping([key("formats", 1, 1, formats)], at: at(1, 1)))
        let named = r.namedSections("formats") { name, f in
            let layout = f.requiredString("layout")
            f.report([
                ConfigIssue(path: "layout", message: "term `m` needs more"),
                ConfigIssue(path: "missing.deeper", message: "x"),
            ])
            return "\(name)=\(layout ?? "")"
        }
        #expect(named.map(\.value) == ["my.layout=m:2-3=beac"])
        #expect(
            r.issues.map(\.located) == [
                "3:13: formats[\"my.layout\"].layout: term `m` needs more",
                "3:5: formats[\"my.layout\"].missing.deeper: x",
            ])
    }

    @Test func declaredKeysAreNotUnknown() {
        var r = ConfigReader(.mapping(["tls": .mapping([ConfigEntry]()), "tsl_ca": .scalar("x")]))
        r.declare("tls", "tls_ca")
        r.reportUnknownKeys()
        #expect(r.issues.map(\.message) == ["unknown key `tsl_ca`; did you mean `tls_ca`?"])
    }

    @Test func pathsRoundTrip() {
        let path = ConfigPath.root.appending("regions").appending(index: 2).appending("enter")
            .appending("a b\"c").appending("rssi_above")
        #expect(path.description == "regions[2].enter[\"a b\\\"c\"].rssi_above")
        #expect(ConfigPath(parsing: path.description) == path)
    }

    @Test func suggestions() {
        #expect(KeySuggestion.closest(to: "intervall_s", among: ["interval_s", "enabled"]) == "interval_s")
        #expect(KeySuggestion.closest(to: "intervalS", among: ["interval_s"]) == "interval_s")
        #expect(KeySuggestion.closest(to: "rsi_abvoe", among: ["rssi_above", "rssi_below"]) == "rssi_above")
        #expect(KeySuggestion.closest(to: "colour", among: ["interval_s", "enabled"]) == nil)
        #expect(KeySuggestion.closest(to: "ab", among: ["xy"]) == nil)
    }

    @Test func gatewayIdentifiers() {
        #expect(GatewaySettings.identifier(fromHostname: "Pi-Kitchen.local") == "pi-kitchen")
        #expect(GatewaySettings.identifier(fromHostname: "") == "beaconbridge")
        #expect(GatewaySettings.identifier(fromHostname: "ü ü") == "beaconbridge")
        #expect(GatewaySettings.identifier(fromHostname: "Büro 2") == "b-ro-2")
        var r = ConfigReader(.mapping(["id": .scalar("a/b"), "room": .scalar("living room"), "name": .scalar("")]))
        _ = GatewaySettings(from: &r, hostname: "h")
        #expect(r.issues.map(\.path) == ["id", "room", "name"])
    }

    @Test func schemaPathsListEveryKnownKey() {
        let root = ConfigNode.mapping([
            "regions": .sequence([.mapping(["name": .scalar("a")]), .mapping(["name": .scalar("b")])]),
            "formats": .mapping(["mine": .mapping(["layout": .scalar("x")])]),
        ])
        var r = ConfigReader(root)
        _ = r.list("regions") { e in
            _ = e.string("name")
            _ = e.section("enter") { s in s.int("rssi_above", in: -127...20) }
        }
        _ = r.namedSections("formats") { _, f in f.string("layout") }
        r.reportUnknownKeys()
        #expect(r.issues.isEmpty)
        #expect(
            r.knownSchemaPaths == [
                "regions", "regions[].name", "regions[].enter", "regions[].enter.rssi_above",
                "formats", "formats.*.layout",
            ])
    }

    @Test func misplacedKeysSayWhereTheyBelong() {
        let root = ConfigNode.mapping(
            [
                key("host", 1, 1, scalar("broker.lan", 1, 7)),
                key(
                    "regions", 2, 1,
                    .sequence(
                        [
                            .mapping(
                                [
                                    key("name", 3, 5, scalar("desk", 3, 11)),
                                    key("match", 4, 5, .mapping([ConfigEntry]())),
                                    key("rssi_above", 5, 5, scalar("-70", 5, 17)),
                                ], at: at(3, 5))
                        ], at: at(3, 3))),
                key("x-defaults", 6, 1, .mapping(["rssi_above": .scalar("-70")])),
            ], at: at(1, 1))
        let (_, issues) = GatewayConfiguration.read(root, file: nil, environment: ConfigEnvironment(hostname: "h"))
        #expect(
            issues.map(\.located) == [
                "1:1: host: unknown key `host`; it belongs under `mqtt`",
                "5:5: regions[0].rssi_above: unknown key `rssi_above`; it belongs under `regions[].enter`",
            ])
    }
}
