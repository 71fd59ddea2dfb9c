import BeaconEvents
import BeaconModel
import BeaconTracking
import Foundation
import SiteConfig
import TestSupport
import Testing

extension SiteConfigGatewaysTests {
    static let node = "beaconbridge_gw_a"
    static let versionConfig = "homeassistant/sensor/\(node)/site_version/config"
    static let problemConfig = "homeassistant/binary_sensor/\(node)/site_problem/config"
    static let statusTopic = "beaconbridge/house/site/status/gw-a"

    /// One gateway (`gw-a`) with Home Assistant discovery on, its own file plus `extra`, replaying its capture;
    /// a subscriber to its topics and to discovery.
    static func startOne(
        _ broker: MosquittoProcess, extra: String, timeout: Int = 6
    ) async throws -> (String, DaemonProcess, TestSubscriber) {
        let directory = try setUp(port: broker.port)
        let own =
            local("gw-a", directory: directory, port: broker.port, timeout: timeout)
            + "topics:\n  home_assistant: {enabled: true}\n" + extra
        try own.write(toFile: directory + "/gw-a.yaml", atomically: true, encoding: .utf8)
        try Data(SyntheticCapture(capture("gw-a")).bytes).write(to: URL(fileURLWithPath: directory + "/gw-a.btsnoop"))
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#", "homeassistant/#"])
        try await subscriber.start()
        return (directory, try startGateway("gw-a", directory: directory), subscriber)
    }

    /// The newest config on `topic` published after message number `after`, as JSON.
    func config(_ subscriber: TestSubscriber, _ topic: String, after: Int = 0) -> JSONValue? {
        subscriber.messages.dropFirst(after).last { $0.topic == topic }?.json
    }

    func gatewayStatus(_ subscriber: TestSubscriber) -> SiteStatus? {
        subscriber.messages.last { $0.topic == Self.statusTopic }.flatMap { SiteStatus.parse(Array($0.payload.utf8)) }
    }

    /// Home Assistant (issue 46): the gateway announces its site configuration version as a diagnostic sensor and
    /// a `problem` binary sensor, both on its retained status topic; after an applied push the discovery is
    /// announced again and the status carries the version, after a refused push the status carries the refusal
    /// (what the problem sensor's templates read) while the version stays the running one.
    @Test func homeAssistantSeesTheRunningVersionAndARefusal() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        let (directory, gateway, subscriber) = try await Self.startOne(broker, extra: "")
        defer {
            gateway.signal(SIGKILL)
            try? FileManager.default.removeItem(atPath: directory)
        }
        try await waitUntil("both site entities announced and the local status", timeout: 30) { [self] in
            config(subscriber, Self.versionConfig) != nil && config(subscriber, Self.problemConfig) != nil
                && gatewayStatus(subscriber)?.state == .local
        }
        let version = try #require(config(subscriber, Self.versionConfig))
        #expect(version["state_topic"] == .string(Self.statusTopic))
        #expect(version["value_template"] == .string("{{ value_json.version }}"))
        #expect(version["unique_id"] == .string("\(Self.node)_site_version"))
        #expect(version["entity_category"] == .string("diagnostic"))
        #expect(version["json_attributes_topic"] == .string(Self.statusTopic))
        let problem = try #require(config(subscriber, Self.problemConfig))
        #expect(problem["device_class"] == .string("problem"))
        #expect(problem["state_topic"] == .string(Self.statusTopic))
        #expect(problem["unique_id"] == .string("\(Self.node)_site_problem"))
        guard case .string(let template)? = problem["value_template"],
            case .string(let attributes)? = problem["json_attributes_template"]
        else { throw TestFailure("the problem sensor has no templates: \(problem)") }
        #expect(template.contains("'refused', 'rolled_back'"), "\(template)")
        #expect(attributes.contains("value_json.get('reason')") && attributes.contains("value_json.get('message')"))
        // Both belong to the gateway's device and follow its availability.
        for entity in [version, problem] {
            #expect(entity["device"]?["identifiers"] == .array([.string(Self.node)]))
            guard case .array(let availability)? = entity["availability"] else {
                throw TestFailure("no availability: \(entity)")
            }
            #expect(availability.first?["topic"] == .string("beaconbridge/gw-a/availability"))
        }
        #expect(gatewayStatus(subscriber)?.version == 0)

        // An applied push: announced again, the status says version 1 applied.
        try Self.shared(region: "office").write(toFile: directory + "/site.yaml", atomically: true, encoding: .utf8)
        let before = subscriber.messages.count
        let push = try await BuiltBinary.run([
            "site", "push", directory + "/site.yaml", "--config", directory + "/gw-a.yaml",
        ])
        try #require(push.status == 0, "\(push.stderr)")
        try await waitUntil("version 1 applied", timeout: 30) { [self] in
            gatewayStatus(subscriber).map { $0.state == .applied && $0.version == 1 } ?? false
        }
        #expect(config(subscriber, Self.versionConfig, after: before) != nil, "announced again after the apply")
        let applied = try #require(subscriber.messages.last { $0.topic == Self.statusTopic }?.json)
        #expect(applied["version"] == .int(1) && applied["state"] == .string("applied"))
        #expect(applied["reason"] == nil, "no reason while nothing is wrong: the problem sensor is off")

        // A refused push (signed with another key): the status says refused with the reason; version 1 runs on.
        let other = try SiteKey(bytes: Array("another-site-key-of-at-least-32-bytes!!".utf8))
        subscriber.publish(
            topic: "beaconbridge/house/site/config",
            payload: SiteEnvelope.signed(site: "house", version: 2, yaml: Self.shared(region: "evil"), key: other).json,
            retain: true)
        try await waitUntil("version 2 refused", timeout: 30) { [self] in
            gatewayStatus(subscriber).map { $0.state == .refused } ?? false
        }
        let refused = try #require(subscriber.messages.last { $0.topic == Self.statusTopic }?.json)
        #expect(refused["version"] == .int(1), "the version sensor keeps the running version")
        #expect(refused["state"] == .string("refused") && refused["reason"] == .string("bad_signature"))
        #expect(refused["subject"] == .int(2))
        guard case .string(let message)? = refused["message"] else { throw TestFailure("no message: \(refused)") }
        #expect(message.contains("signature"), "\(message)")
        // Retained, so Home Assistant reads it whenever it subscribes.
        let late = try TestSubscriber(port: broker.port, patterns: [Self.statusTopic, Self.problemConfig])
        try await late.start()
        defer { Task { await late.stop() } }
        try await waitUntil("the retained status and config", timeout: 10) {
            late.messages.contains { $0.topic == Self.statusTopic && $0.payload.contains("bad_signature") }
                && late.messages.contains { $0.topic == Self.problemConfig }
        }
        #expect(gateway.isRunning && !gateway.stderr.contains(Self.keyText))
        await subscriber.stop()
    }
}
