import BeaconConfig
import BeaconConfigReading
import Foundation
import SiteConfig
import Testing
import YAMLConfig

/// Every refusal of `SiteVerifier`, in its order, and the acceptance of a good envelope (docs/site-config.md).
@Suite struct SiteVerifierTests {
    static let key = try! SiteKey(bytes: Array("0123456789abcdef0123456789abcdef-site-key".utf8))
    static let otherKey = try! SiteKey(bytes: Array("fedcba9876543210fedcba9876543210-other".utf8))

    static let local = """
        gateway:
          id: gw-kitchen
          room: kitchen
        mqtt:
          host: 127.0.0.1
          port: 1883
        site:
          id: house
          key_file: /etc/beaconbridge/site.key
          max_bytes: 4096
        regions:
          - name: local-only-region
            match: {format: ibeacon, uuid: 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6}
            enter: {rssi_above: -70}
        """

    static let shared = """
        regions:
          - name: office
            match: {format: ibeacon, uuid: 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6, major: 1}
            enter: {rssi_above: -70}
        telemetry:
          interval_s: 30
        """

    func verifier() throws -> SiteVerifier {
        let document = YAMLParser.parse(Self.local, file: "/etc/beaconbridge/beaconbridge.yaml")
        let root = try #require(document.root)
        let configuration = try ConfigurationLoader.load(
            yaml: Self.local, file: "local.yaml", environment: ConfigEnvironment(hostname: "pi"), checksFiles: false
        ).get()
        let settings = try #require(configuration.site)
        return SiteVerifier(
            settings: settings, key: Self.key, localRoot: root, localFile: "/etc/beaconbridge/beaconbridge.yaml",
            environment: ConfigEnvironment(hostname: "pi"), checksFiles: false)
    }

    func envelope(
        _ yaml: String = SiteVerifierTests.shared, version: Int64 = 3, site: String = "house",
        key: SiteKey = SiteVerifierTests.key
    ) -> SiteEnvelope {
        SiteEnvelope.signed(site: site, version: version, yaml: yaml, key: key)
    }

    func refusal(_ payload: String, running: Int64 = 2) throws -> SiteRefusal? {
        if case .failure(let refusal) = try verifier().verify(Array(payload.utf8), running: running) {
            return refusal
        }
        return nil
    }

    @Test func aGoodEnvelopeIsAcceptedWithTheLocalPartKept() throws {
        let accepted = try verifier().verify(Array(envelope().json.utf8), running: 2).get()
        #expect(accepted.envelope.version == 3)
        // The shared part's regions replace the local file's; the local part stays the local file's.
        #expect(accepted.configuration.regions.map(\.name) == ["office"])
        #expect(accepted.configuration.telemetry.interval == 30)
        #expect(accepted.configuration.gateway.id == "gw-kitchen")
        #expect(accepted.configuration.mqtt.host == "127.0.0.1")
        #expect(accepted.configuration.site?.id == "house")
    }

    @Test func theEnvelopeRoundTripsThroughItsJSON() throws {
        let sent = envelope()
        #expect(try SiteEnvelope.parse(Array(sent.json.utf8)).get() == sent)
        #expect(sent.sha256.count == 64 && sent.signature.count == 64)
    }

    @Test func largerThanTheBoundIsRefusedUnread() throws {
        let padding = String(repeating: "#", count: 5_000)
        let refused = try #require(try refusal(envelope(Self.shared + "\n" + padding).json))
        #expect(refused.reason == .tooLarge)
        #expect(refused.message.contains("max_bytes is 4096"))
    }

    @Test(arguments: [
        ("not json at all", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ("{\"format\": 2, \"site\": \"house\"}", "format 2"),
        ("{\"format\": 1, \"site\": \"house\", \"version\": 3}", "`sha256`, `yaml`, `signature`"),
        (
            "{\"format\": 1, \"site\": \"house\", \"version\": \"3\", \"sha256\": \"\", \"yaml\": \"\", \"signature\": \"\"}",
            "`version`"
        ),
    ])
    func malformedEnvelopesAreRefused(payload: String, says: String) throws {
        let refused = try #require(try refusal(payload))
        #expect(refused.reason == .malformed)
        #expect(refused.message.contains(says), "\(refused.message)")
    }

    @Test func aTruncatedEnvelopeIsRefused() throws {
        let json = envelope().json
        let refused = try #require(try refusal(String(json.prefix(json.count / 2))))
        #expect(refused.reason == .malformed)
    }

    @Test func bytesThatAreNotUTF8AreRefused() throws {
        let refused = try #require(
            try {
                if case .failure(let r) = try verifier().verify([0x7b, 0xff, 0xfe, 0x7d], running: 0) { return r }
                return nil
            }())
        #expect(refused.reason == .malformed && refused.message.contains("UTF-8"))
    }

    @Test func anotherSiteIsRefused() throws {
        let refused = try #require(try refusal(envelope(site: "office-block").json))
        #expect(refused.reason == .otherSite)
        #expect(refused.message.contains("office-block"))
    }

    @Test func anotherKeyIsRefused() throws {
        let refused = try #require(try refusal(envelope(key: Self.otherKey).json))
        #expect(refused.reason == .badSignature)
    }

    @Test func aTamperedVersionOrHashIsRefusedByTheSignature() throws {
        var bumped = envelope()
        bumped.version = 99
        #expect(try refusal(bumped.json)?.reason == .badSignature)
        // The YAML changed and its hash recomputed: the signature covers the old hash.
        var rehashed = envelope()
        rehashed.yaml = Self.shared.replacingOccurrences(of: "-70", with: "-40")
        rehashed.sha256 = SiteDigest.hex(SiteDigest.sha256(Array(rehashed.yaml.utf8)))
        #expect(try refusal(rehashed.json)?.reason == .badSignature)
        var garbage = envelope()
        garbage.signature = "zz"
        #expect(try refusal(garbage.json)?.reason == .badSignature)
    }

    @Test func aTamperedYAMLIsRefusedByItsHash() throws {
        var tampered = envelope()
        tampered.yaml = Self.shared.replacingOccurrences(of: "-70", with: "-40")
        let refused = try #require(try refusal(tampered.json))
        #expect(refused.reason == .hashMismatch)
    }

    @Test(arguments: [Int64(2), 1])
    func aVersionNotNewerIsRefusedAsAReplay(version: Int64) throws {
        let refused = try #require(try refusal(envelope(version: version).json, running: 2))
        #expect(refused.reason == .notNewer)
        #expect(refused.message.contains("running version 2"))
    }

    @Test func yamlThatDoesNotParseIsRefusedWithItsLine() throws {
        let refused = try #require(try refusal(envelope("regions:\n  - name: [unclosed\n").json))
        #expect(refused.reason == .invalid)
        #expect(refused.problems.first?.hasPrefix("site v3:") == true, "\(refused.problems)")
    }

    @Test func yamlThatDoesNotValidateIsRefusedNamingItsKeyPaths() throws {
        let yaml = """
            regions:
              - name: office
                match: {format: ibeacon}
                enter: {rssi_abvoe: -70}
            telemetry:
              interval_s: 1
            """
        let refused = try #require(try refusal(envelope(yaml).json))
        #expect(refused.reason == .invalid)
        let text = refused.problems.joined(separator: "\n")
        #expect(text.contains("site v3:4:") && text.contains("regions[0].enter"), "\(text)")
        #expect(text.contains("telemetry.interval_s"), "\(text)")
    }

    @Test(arguments: [
        ("mqtt:\n  host: evil.example\n", "mqtt"),
        ("gateway:\n  id: gw-other\n", "gateway"),
        ("site:\n  key_file: /tmp/k\n", "site"),
        (
            "devices:\n  known:\n    - name: phone\n      irk: 0123456789abcdef0123456789abcdef\n",
            "devices.known[0].irk"
        ),
        (
            "formats:\n  bthome_keys:\n    - address: \"54:48:E6:8F:80:A5\"\n      key: 231d39c1d7cc1ab1aee224cd096db932\n",
            "formats.bthome_keys[0].key"
        ),
    ])
    func localOnlyKeysAreRefused(yaml: String, path: String) throws {
        let refused = try #require(try refusal(envelope(yaml).json))
        #expect(refused.reason == .localOnly)
        #expect(refused.problems.joined().contains(path), "\(refused.problems)")
        // A secret is never repeated in the refusal.
        #expect(!refused.description.contains("0123456789abcdef0123456789abcdef"))
        #expect(!refused.description.contains("231d39c1"))
    }

    @Test func anEmptySharedPartKeepsTheLocalSections() throws {
        let accepted = try verifier().verify(Array(envelope("").json.utf8), running: 0).get()
        #expect(accepted.configuration.regions.map(\.name) == ["local-only-region"])
    }
}

/// The site key: from a file, at least 32 bytes, never shown.
@Suite struct SiteKeyTests {
    @Test func aKeyFileIsReadWithoutItsNewlineAndNeverShown() throws {
        let path = NSTemporaryDirectory() + "site-key-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = "4f3c2b1a00112233445566778899aabbccddeeff00112233445566778899aabb"
        try (text + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let key = try SiteKey.read(path: path)
        #expect(key.bytes == Array(text.utf8))
        #expect(!"\(key)".contains("4f3c2b1a"))
    }

    @Test func aShortKeyIsRefused() throws {
        let path = NSTemporaryDirectory() + "site-key-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "short\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: SiteKeyError.tooShortFile(path, 5)) { try SiteKey.read(path: path) }
    }

    @Test func aMissingKeyFileSaysWhich() throws {
        do {
            _ = try SiteKey.read(path: "/nonexistent/site.key")
            Issue.record("read a missing file")
        } catch {
            #expect("\(error)".contains("/nonexistent/site.key"))
        }
    }
}

/// The `site:` section of the local file.
@Suite struct SiteSettingsTests {
    @Test func everyProblemIsNamed() throws {
        let yaml = "site:\n  id: a/b\n  key_file: relative.key\n  key: inline\n  apply_timeout_s: 1\n"
        guard
            case .failure(let errors) = ConfigurationLoader.load(
                yaml: yaml, file: "local.yaml", environment: ConfigEnvironment(hostname: "pi"), checksFiles: false)
        else {
            Issue.record("accepted")
            return
        }
        let text = errors.lines.joined(separator: "\n")
        for path in ["site.id", "site.key_file", "site.key", "site.apply_timeout_s"] {
            #expect(text.contains(path), "\(path) in \(text)")
        }
        #expect(!text.contains("inline"))
    }

    @Test func defaults() throws {
        let configuration = try ConfigurationLoader.load(
            yaml: "site:\n  id: house\n  key_file: /etc/beaconbridge/site.key\n", file: "local.yaml",
            environment: ConfigEnvironment(hostname: "pi"), checksFiles: false
        ).get()
        #expect(configuration.site == SiteSettings(id: "house", keyFile: "/etc/beaconbridge/site.key"))
    }

    @Test func topics() {
        let topics = SiteTopics(prefix: "beaconbridge", site: "house")
        #expect(topics.config == "beaconbridge/house/site/config")
        #expect(topics.status(gateway: "gw1") == "beaconbridge/house/site/status/gw1")
        #expect(topics.statusFilter == "beaconbridge/house/site/status/+")
    }

    @Test func aStatusRoundTrips() {
        let status = SiteStatus(
            gateway: "gw1", site: "house", version: 3, sha256: "ab", state: .refused, subject: 4,
            reason: "bad_signature", message: "the signature does not match", time: 1_765_000_000.5)
        #expect(SiteStatus.parse(Array(status.json.utf8)) == status)
        #expect(SiteStatus.parse(Array("{\"gateway\": 1}".utf8)) == nil)
    }
}
