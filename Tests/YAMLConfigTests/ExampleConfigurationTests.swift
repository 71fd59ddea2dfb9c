import BeaconCore
import Foundation
import Testing
@testable import YAMLConfig

/// The shipped example must stay valid: it is what users copy.
@Suite struct ExampleConfigurationTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let example = packageRoot.appendingPathComponent("config/beaconbridge.yaml").path

    @Test func exampleLoadsWithoutIssues() throws {
        let result = ConfigurationLoader.load(path: Self.example, environment: ConfigEnvironment(hostname: "pi.lan"))
        switch result {
        case .success(let configuration):
            #expect(configuration.gateway.id == "pi")
            #expect(configuration.logging.level == .info)
            #expect(configuration.telemetry.interval == 60)
        case .failure(let errors):
            Issue.record("example has problems:\n\(errors)")
        }
    }

    @Test func exampleUncommentedStaysValid() throws {
        // Every commented-out `key: value` line of the example, uncommented, must still load.
        let text = try String(contentsOfFile: Self.example, encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let trimmed = line.drop { $0 == " " }
            let indent = line.prefix { $0 == " " }
            if trimmed.hasPrefix("#"), let colon = trimmed.firstIndex(of: ":"),
               !trimmed.dropFirst().hasPrefix(" "), trimmed.dropFirst()[..<colon].allSatisfy({ $0 != " " }) {
                return String(indent) + String(trimmed.dropFirst())
            }
            return String(line)
        }.joined(separator: "\n")
        #expect(uncommented != text)
        let result = ConfigurationLoader.load(yaml: uncommented, file: "example-uncommented.yaml",
                                              environment: ConfigEnvironment(hostname: "h"))
        if case .failure(let errors) = result { Issue.record("uncommented example has problems:\n\(errors)") }
        if case .success(let configuration) = result { #expect(configuration.gateway.id == "pi-kitchen") }
    }
}
