import BeaconConfigReading
import BeaconEvents
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
            #expect(configuration.regions.map(\.name) == ["desk", "office"])
            #expect(configuration.regions.first?.match.identifiers == ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1"])
            #expect(configuration.regions.first?.enter == .rssi(-70))
            #expect(configuration.formats.layouts.map(\.name) == ["my-sensor"])
            #expect(
                configuration.beacons == [
                    KnownBeacon(
                        id: "ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:7",
                        name: "Keys")
                ])
            #expect(configuration.tracking.restoreMaxAge == 900)
            #expect(configuration.outbox.maxBytes == 256 << 20)
            #expect(configuration.mqtt.reconnectMin == 0.5)
        case .failure(let errors):
            Issue.record("example has problems:\n\(errors)")
        }
    }

    /// The example says "values shown are the defaults": apart from its sample regions, beacons, layout,
    /// measured power and devices, it must decode to exactly what an empty file does.
    @Test func exampleValuesAreTheDefaults() throws {
        let environment = ConfigEnvironment(hostname: "pi.lan")
        var example = try ConfigurationLoader.load(path: Self.example, environment: environment).get()
        let defaults = try ConfigurationLoader.load(yaml: "", file: "empty.yaml", environment: environment).get()
        #expect(!example.regions.isEmpty && !example.beacons.isEmpty && !example.formats.layouts.isEmpty)
        example.regions = defaults.regions
        example.beacons = defaults.beacons
        example.formats.layouts = defaults.formats.layouts
        example.distance.measuredPower = defaults.distance.measuredPower
        #expect(!example.devices.known.isEmpty)
        example.devices.known = defaults.devices.known
        example.tracking.awayTimeoutOverrides = defaults.tracking.awayTimeoutOverrides
        #expect(example == defaults)
    }

    /// The example with every commented-out `#key: value` line (a `#` right before a key) uncommented.
    static func uncommentedExample() throws -> String {
        let text = try String(contentsOfFile: example, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let trimmed = line.drop { $0 == " " }
            let indent = line.prefix { $0 == " " }
            if trimmed.hasPrefix("#"), let colon = trimmed.firstIndex(of: ":"),
                !trimmed.dropFirst().hasPrefix(" "), trimmed.dropFirst()[..<colon].allSatisfy({ $0 != " " })
            {
                return String(indent) + String(trimmed.dropFirst())
            }
            return String(line)
        }.joined(separator: "\n")
    }

    @Test func exampleUncommentedStaysValid() throws {
        let text = try String(contentsOfFile: Self.example, encoding: .utf8)
        let uncommented = try Self.uncommentedExample()
        #expect(uncommented != text)
        // The example names certificate files that exist only on a configured machine: no file checks here.
        let result = ConfigurationLoader.load(
            yaml: uncommented, file: "example-uncommented.yaml",
            environment: ConfigEnvironment(hostname: "h"), checksFiles: false)
        switch result {
        case .failure(let errors):
            Issue.record("uncommented example has problems:\n\(errors)")
        case .success(let configuration):
            #expect(configuration.gateway.id == "pi-kitchen")
            #expect(configuration.mqtt.tls?.caFile == "/etc/beaconbridge/ca.crt")
            #expect(configuration.regions.first?.match.address != nil)
        }
    }
}
