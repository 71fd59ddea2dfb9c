import BeaconConfig
import BeaconConfigReading
import Foundation
import Testing

@testable import YAMLConfig

/// docs/configuration.md and the configuration reader must list the same keys, and the example file must
/// use every key the reader knows.
@Suite struct DocumentedKeysTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Key paths in the first column of the reference tables: "| `gateway.id` | ...".
    static func documentedKeys() throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        var keys: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            if cell.contains("."), !cell.contains(" "), cell.first?.isLowercase == true { keys.insert(String(cell)) }
        }
        return keys
    }

    /// Schema paths the reader knows after reading the example with its commented-out keys uncommented,
    /// leaves only (sections that have documented children are not keys of their own).
    static func readerKeys() throws -> Set<String> {
        let document = YAMLParser.parse(try ExampleConfigurationTests.uncommentedExample(), file: "example")
        #expect(document.issues.isEmpty)
        let node = try #require(document.root)
        var reader = ConfigReader(node, file: "example")
        _ = GatewayConfiguration(from: &reader, environment: ConfigEnvironment(hostname: "h"))
        let all = reader.knownSchemaPaths
        return all.filter { path in !all.contains { $0.hasPrefix(path + ".") || $0.hasPrefix(path + "[]") } }
    }

    @Test func everyReaderKeyIsDocumentedAndViceVersa() throws {
        let all = try Self.documentedKeys()
        // Rows for a section that also has rows for its keys describe the section; compare the leaves.
        let documented = all.filter { key in !all.contains { $0.hasPrefix(key + ".") || $0.hasPrefix(key + "[]") } }
        let known = try Self.readerKeys()
        #expect(known.count >= 80)
        #expect(known.subtracting(documented).sorted() == [], "keys the reader knows but docs/configuration.md lacks")
        #expect(documented.subtracting(known).sorted() == [], "documented keys the reader does not read")
    }

    @Test func exampleSetsOrMentionsEveryKey() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("config/beaconbridge.yaml"), encoding: .utf8)
        for key in try Self.readerKeys() {
            let leaf = key.split(separator: ".").last.map(String.init) ?? key
            let leafName = leaf.hasSuffix("[]") ? String(leaf.dropLast(2)) : leaf
            #expect(text.contains("\(leafName):"), "config/beaconbridge.yaml does not mention `\(key)`")
        }
    }
}
