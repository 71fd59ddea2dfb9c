import BeaconModel
import Foundation
import GATTTestPeer
import TestSupport
import Testing

/// Firmware updates from the built daemon against a real mosquitto, with no device reachable: the package of
/// `gatt.devices[].firmware` is checked at the start (check-config names the key and the file), the update entity
/// is discovered with its state (latest_version from the package), and every `dfu` or `install` gets a reply with
/// its id: refusals at once (`not_allowed`, `bad_request` naming `package`, `package_unreadable`), an update that
/// cannot connect a typed link error, the entity back to `in_progress: false`, sightings flowing meanwhile.
@Suite struct GATTDFUDaemonTests {
    static let device = "C0:FF:EE:00:00:01"

    func writePackage(_ path: String, version: UInt32) throws {
        let image = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let zip = TestZipFile.storedDFUPackage(
            initPacket: TestInitPacket.bytes(version: version, applicationSize: image.count), firmware: image)
        try Data(zip).write(to: URL(fileURLWithPath: path))
    }

    func config(_ bed: DaemonTestBed, firmware: String) throws {
        try bed.writeConfig(
            """
            topics:
              home_assistant:
                enabled: true
            gatt:
              enabled: true
              slots: 1
              connect_timeout_s: 2
              devices:
                - address: \(Self.device)
                  name: tag
                  firmware: \(firmware)
            """)
    }

    @Test func aBadPackageStopsCheckConfigNamingTheKeyAndFile() async throws {
        let bed = try DaemonTestBed()
        try "not a zip".write(toFile: bed.directory + "/bad.zip", atomically: true, encoding: .utf8)
        try config(bed, firmware: bed.directory + "/bad.zip")
        let bad = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(bad.status == 78, "stdout: \(bad.stdout) stderr: \(bad.stderr)")
        let output = bad.stdout + bad.stderr
        #expect(output.contains("gatt.devices[0].firmware") && output.contains("bad.zip"), "\(output)")
        #expect(output.contains("not a zip file"), "\(output)")
        try config(bed, firmware: bed.directory + "/missing.zip")
        let missing = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(missing.status == 78 && (missing.stdout + missing.stderr).contains("cannot read"), "\(missing)")
    }

    @Test func updatesAreAnsweredAndTheEntityFollows() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try FileManager.default.createDirectory(atPath: bed.directory + "/fw", withIntermediateDirectories: true)
        try writePackage(bed.directory + "/fw/tag.zip", version: 3)
        try config(bed, firmware: bed.directory + "/fw/tag.zip")
        let now = Date().timeIntervalSince1970
        let capture = try bed.writeCapture(
            "walk.btsnoop", DaemonTestBed.iBeaconObservations(minor: 1, start: now, duration: 40, interval: 0.5))
        let subscriber = try TestSubscriber(port: bed.broker.port, patterns: ["beaconbridge/#", "homeassistant/#"])
        try await subscriber.start()
        defer { Task { await subscriber.stop() } }
        let daemon = try DaemonProcess(arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath])
        let base = bed.topicBase
        @Sendable func reply(_ id: String) -> JSONValue? {
            subscriber.messages(under: "\(base)/reply/gatt/dfu").compactMap(\.json).last { $0["id"] == .string(id) }
        }
        @Sendable func states() -> [JSONValue] {
            subscriber.messages(under: "\(base)/device/tag/update").compactMap(\.json)
        }
        try await waitUntil("the update entity's discovery and state", timeout: 60) {
            !subscriber.messages(under: "homeassistant/update/").isEmpty && !states().isEmpty
        }
        #expect(states().first?["latest_version"] == .string("3"))
        #expect(states().first?["in_progress"] == .bool(false))
        // The subscription goes out once connected: ask until the first answer comes (bounded).
        try await waitUntil("a reply to the first dfu", timeout: 60) {
            if reply("far") == nil {
                subscriber.publish(
                    topic: "\(base)/command/gatt/dfu", payload: #"{"id":"far","address":"C0:FF:EE:00:00:09"}"#)
            }
            return reply("far") != nil
        }
        #expect(reply("far")?["error"]?["kind"] == .string("not_allowed"))
        let sightingsBefore = subscriber.messages(under: "\(base)/sighting/").count
        let commands: [(topic: String, payload: String)] = [
            ("gatt/dfu", #"{"id":"dots","device":"tag","package":"../tag.zip"}"#),
            ("gatt/dfu", #"{"id":"none","device":"tag","package":"other.zip"}"#),
            ("gatt/dfu", #"{"id":"run","device":"tag","force":true}"#),
            ("update/tag", "press"),
        ]
        for command in commands {
            subscriber.publish(topic: "\(base)/command/\(command.topic)", payload: command.payload)
        }
        try await waitUntil("every reply", timeout: 60) {
            ["dots", "none", "run", "install-tag"].allSatisfy { reply($0) != nil }
        }
        #expect(reply("dots")?["error"]?["step"] == .string("package"))
        #expect(reply("none")?["error"]?["kind"] == .string("package_unreadable"))
        let unreadable = "\(reply("none")?["error"]?["message"] ?? .null)"
        #expect(unreadable.contains("other.zip"), "\(unreadable)")
        #expect(reply("install-tag")?["error"]?["step"] == .string("payload"))
        // No device to reach: a typed link error with its step, and the entity is not left in progress.
        let run = try #require(reply("run"))
        #expect(run["ok"] == .bool(false))
        let linkKinds: Set<String> = ["adapter", "connect_timeout", "unreachable", "refused", "system", "no_slot"]
        guard case .string(let kind)? = run["error"]?["kind"] else {
            Issue.record("no kind in \(run)")
            return
        }
        #expect(linkKinds.contains(kind), "\(run)")
        try await waitUntil("the entity back to idle", timeout: 30) { states().last?["in_progress"] == .bool(false) }
        #expect(states().contains { $0["in_progress"] == .bool(true) })
        try await waitUntil("sightings after the commands", timeout: 30) {
            subscriber.messages(under: "\(base)/sighting/").count > sightingsBefore + 3
        }
        let status = await daemon.waitForExit(timeout: 90)
        #expect(status == 0, "stderr: \(daemon.stderr)")
        #expect(!daemon.stderr.contains("Fatal error"))
    }
}
