import BeaconEvents
import BeaconModel
import Foundation
import SiteConfig
import TestSupport
import Testing

extension SiteConfigGatewaysTests {
    /// The gateway's own region, `desk`, which the site's `regions` replaces.
    static let deskRegion = """
        regions:
          - name: desk
            match: {format: ibeacon, uuid: \(uuid)}
            enter: {rssi_above: -70}

        """

    /// The capture's iBeacon of gw-a (minor 1), named in the local file after the reload.
    static let keys = "ibeacon:\(uuid):1:1"

    /// SIGHUP with a site configuration running (issue 46): the local file is read again and joined with the
    /// running site part, which is neither lost nor reverted; a restart after that starts on the committed site
    /// part joined with the edited local file. Seen from outside: the region events (the site's `office`, never the
    /// local file's `desk` once the site runs), the Home Assistant discovery (a beacon named only in the edited local
    /// file gets its entities, with the site's region and not the local one) and the retained site status.
    @Test func sighupKeepsTheSitePartAndRereadsTheLocalPartThenARestartKeepsBoth() async throws {
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        let (directory, first, subscriber) = try await Self.startOne(broker, extra: Self.deskRegion)
        var second: DaemonProcess?
        defer {
            first.signal(SIGKILL)
            second?.signal(SIGKILL)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let base = "beaconbridge/gw-a/region/"
        @Sendable func entered(_ region: String, after: Int) -> Bool {
            subscriber.messages.dropFirst(after).contains {
                $0.topic.hasPrefix(base + region + "/") && $0.string("event") == "enter"
            }
        }
        try await waitUntil("the local region entered", timeout: 30) { entered("desk", after: 0) }

        // The site part: region `office` replaces the local `desk`.
        try Self.shared(region: "office").write(toFile: directory + "/site.yaml", atomically: true, encoding: .utf8)
        let push = try await BuiltBinary.run([
            "site", "push", directory + "/site.yaml", "--config", directory + "/gw-a.yaml",
        ])
        try #require(push.status == 0, "\(push.stderr)")
        try await waitUntil("version 1 applied and office entered", timeout: 30) { [self] in
            gatewayStatus(subscriber).map { $0.state == .applied && $0.version == 1 } ?? false
                && entered("office", after: 0)
        }

        // The local file edited (a beacon named, the local regions changed: desk's level, shelf added) and SIGHUP.
        let slug = TopicLayout.slug(Self.keys)
        let tracker = "homeassistant/device_tracker/\(Self.node)/\(slug)_tracker/config"
        let officeSensor = "homeassistant/binary_sensor/\(Self.node)/\(slug)_region_office/config"
        let deskSensor = "homeassistant/binary_sensor/\(Self.node)/\(slug)_region_desk/config"
        #expect(!subscriber.messages.contains { $0.topic == tracker }, "not named before the edit")
        let edited =
            Self.local("gw-a", directory: directory, port: broker.port, timeout: 6)
            + "topics:\n  home_assistant: {enabled: true}\n"
            + Self.deskRegion.replacingOccurrences(of: "-70", with: "-90")
            + "  - name: shelf\n    match: {format: ibeacon, uuid: \(Self.uuid)}\n    enter: {rssi_above: -90}\n"
            + "beacons:\n  - id: \(Self.keys)\n    name: Keys\n"
        try edited.write(toFile: directory + "/gw-a.yaml", atomically: true, encoding: .utf8)
        let beforeReload = subscriber.messages.count
        let statusesBefore = subscriber.messages.filter { $0.topic == Self.statusTopic }.count
        // (`configuration reloaded` is logged by every apply, the push's too: the reload is the next one.)
        let reloadsBefore = first.stderr.components(separatedBy: "configuration reloaded").count
        first.signal(SIGHUP)
        try await waitUntil("the named beacon announced after the reload", timeout: 30) { [self] in
            config(subscriber, tracker, after: beforeReload) != nil
                && config(subscriber, officeSensor, after: beforeReload) != nil
        }
        try await waitUntil("reloaded", timeout: 10) {
            first.stderr.components(separatedBy: "configuration reloaded").count > reloadsBefore
        }
        #expect(
            logValue(first.stderr, message: "configuration reloaded", key: "regions") == "1",
            "the site's one region, not the local file's two")
        let shelfSensor = "homeassistant/binary_sensor/\(Self.node)/\(slug)_region_shelf/config"
        #expect(
            config(subscriber, deskSensor, after: beforeReload) == nil
                && config(subscriber, shelfSensor, after: beforeReload) == nil, "the local regions stay replaced")
        // A few seconds of events after the reload: the site's region neither left nor entered again, no desk.
        try await Task.sleep(for: .seconds(3))
        let afterReload = subscriber.messages.dropFirst(beforeReload)
        #expect(
            !afterReload.contains {
                ($0.topic.hasPrefix(base + "desk/") || $0.topic.hasPrefix(base + "shelf/")) && $0.string("event") != nil
            })
        #expect(!afterReload.contains { $0.topic.hasPrefix(base + "office/") && $0.string("event") == "exit" })
        #expect(!entered("office", after: beforeReload), "office kept its state")
        // The site status is the same version, still applied (no new decision).
        #expect(gatewayStatus(subscriber).map { $0.state == .applied && $0.version == 1 } ?? false)
        #expect(
            subscriber.messages.filter { $0.topic == Self.statusTopic }.count == statusesBefore,
            "a local reload is no site decision")
        #expect(!first.stderr.contains("reload refused"), "\(first.stderr)")

        // A restart (the retained version 1 stays on the broker: the same version is not applied twice).
        first.signal(SIGTERM)
        #expect(await first.waitForExit(timeout: 30) != nil)
        let beforeRestart = subscriber.messages.count
        let gateway = try Self.startGateway("gw-a", directory: directory)
        second = gateway
        try await waitUntil("restarted on version 1, office entered, the beacon named", timeout: 30) { [self] in
            subscriber.messages.dropFirst(beforeRestart).contains {
                $0.topic == Self.statusTopic && $0.payload.contains("\"state\":\"applied\"")
            } && entered("office", after: beforeRestart) && config(subscriber, tracker, after: beforeRestart) != nil
        }
        #expect(gateway.stderr.contains("starting on the last committed site configuration"), "\(gateway.stderr)")
        #expect(logValue(gateway.stderr, message: "starting on the last committed", key: "version") == "1")
        #expect(config(subscriber, deskSensor, after: beforeRestart) == nil)
        #expect(
            !subscriber.messages.dropFirst(beforeRestart).contains {
                $0.topic.hasPrefix(base + "desk/") || $0.topic.hasPrefix(base + "shelf/")
            })
        #expect(gatewayStatus(subscriber).map { $0.state == .applied && $0.version == 1 } ?? false)
        await subscriber.stop()
    }
}
