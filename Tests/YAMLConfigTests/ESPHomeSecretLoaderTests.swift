import BeaconModel
import Foundation
import Testing

@testable import YAMLConfig

/// `esphome_api.encryption_key_file` / `_env` and `password_file` / `_env`: checked when the proxy is enabled
/// (exists, readable, the key 32 bytes in base64), each problem at its line and column, never the secret.
@Suite struct ESPHomeSecretLoaderTests: SectionLoading {
    let checksFiles = true
    static let key = Data((0..<32).map { UInt8($0 * 7 & 0xFF) }).base64EncodedString()

    func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "esphome-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    func section(_ lines: String, enabled: Bool = true) -> String {
        "gateway: {id: gw}\nesphome_api:\n  enabled: \(enabled)\n" + lines
    }

    @Test func aValidKeyFileAndPasswordFileAreAccepted() throws {
        try withDirectory { directory in
            let keyFile = directory.appendingPathComponent("esphome.key").path
            let passwordFile = directory.appendingPathComponent("esphome.password").path
            try (Self.key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
            try "open sesame\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let result = load(section("  encryption_key_file: \(keyFile)\n  password_file: \(passwordFile)\n"))
            guard case .success = result else {
                Issue.record("refused: \(result)")
                return
            }
        }
    }

    @Test func aFileThatIsNotAKeyIsReportedAtItsLineWithoutItsContent() throws {
        try withDirectory { directory in
            let short = Data(repeating: 0x41, count: 16).base64EncodedString()  // 16 bytes, not 32
            let cases: [(name: String, content: String)] = [
                ("short.key", short), ("hex.key", String(repeating: "ab", count: 32)),
                ("empty.key", ""),
            ]
            for (name, content) in cases {
                let file = directory.appendingPathComponent(name).path
                try content.write(toFile: file, atomically: true, encoding: .utf8)
                guard case let .failure(errors) = load(section("  bind: 127.0.0.1\n  encryption_key_file: \(file)\n"))
                else {
                    Issue.record("\(name) accepted")
                    continue
                }
                #expect(
                    errors.lines == [
                        "t.yaml:5:24: esphome_api.encryption_key_file: `\(file)` does not hold "
                            + ESPHomeSecretLoader.keyShape
                    ])
                if !content.isEmpty { #expect(!errors.lines.joined().contains(content)) }
            }
        }
    }

    @Test func aMissingFileOrADirectoryIsReported() throws {
        try withDirectory { directory in
            let missing = directory.appendingPathComponent("absent.key").path
            guard
                case let .failure(errors) = load(
                    section("  encryption_key_file: \(missing)\n  password_file: \(directory.path)\n"))
            else {
                Issue.record("accepted")
                return
            }
            #expect(errors.lines.count == 2)
            #expect(errors.lines.first == "t.yaml:4:24: esphome_api.encryption_key_file: `\(missing)` does not exist")
            #expect(
                errors.lines.last?.hasPrefix(
                    "t.yaml:5:18: esphome_api.password_file: `\(directory.path)` cannot be read") == true)
        }
    }

    @Test func environmentVariablesAreCheckedWithoutEchoingTheirValue() throws {
        let unset = "BEACONBRIDGE_TEST_UNSET_ESPHOME_\(UInt32.random(in: 0...UInt32.max))"
        guard
            case let .failure(unsetErrors) = load(section("  encryption_key_env: \(unset)\n  password_env: \(unset)\n"))
        else {
            Issue.record("accepted")
            return
        }
        #expect(
            unsetErrors.lines == [
                "t.yaml:4:23: esphome_api.encryption_key_env: environment variable \(unset) is not set",
                "t.yaml:5:17: esphome_api.password_env: environment variable \(unset) is not set",
            ])
        let name = "BEACONBRIDGE_TEST_ESPHOME_KEY_\(UInt32.random(in: 0...UInt32.max))"
        let notAKey = "bm90IGEga2V5IGF0IGFsbA=="
        setenv(name, notAKey, 1)
        defer { unsetenv(name) }
        guard case let .failure(errors) = load(section("  encryption_key_env: \(name)\n")) else {
            Issue.record("accepted")
            return
        }
        #expect(
            errors.lines == [
                "t.yaml:4:23: esphome_api.encryption_key_env: environment variable \(name) does not hold "
                    + ESPHomeSecretLoader.keyShape
            ])
        #expect(!errors.lines.joined().contains(notAKey))
        setenv(name, Self.key, 1)
        guard case .success = load(section("  encryption_key_env: \(name)\n")) else {
            Issue.record("a valid key refused")
            return
        }
    }

    @Test func nothingIsCheckedWhileTheProxyIsDisabled() {
        let result = load(
            section(
                "  encryption_key_file: /nonexistent/esphome.key\n  password_env: BEACONBRIDGE_TEST_UNSET_X\n",
                enabled: false))
        guard case .success = result else {
            Issue.record("refused: \(result)")
            return
        }
    }
}
