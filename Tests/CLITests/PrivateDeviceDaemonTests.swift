import BeaconFormats
import BeaconModel
import Foundation
import TestSupport
import Testing

/// Phones with private addresses through the built binary: `keys import-bluez` from a BlueZ directory, a
/// replay of rotating resolvable private addresses to a real broker followed as one device, the byte order that
/// matched reported by `check-config` and `keys check`, and the key nowhere in any output or MQTT message.
@Suite struct PrivateDeviceDaemonTests {
    static let keyAsWritten = "ec0234a357c8ad05341010a60a397d9b"
    static let keyReversed = "9b7d390aa610103405adc857a33402ec"
    static let keyBase64 = "7AI0o1fIrQU0EBCmCjl9mw=="
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    /// Every spelling of the key a leak could take.
    static func containsKey(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.contains(keyAsWritten) || lower.contains(keyReversed) || text.contains(keyBase64)
            || text.contains("m305CqYQEDQFrchXozQC7A==")
    }

    @Test func importBlueZWritesPrivateKeyFilesAndPrintsNoKey() async throws {
        let directory = try TestDirectory.make(prefix: "bb-bluez")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let device = directory + "/bluetooth/00:1A:7D:DA:71:13/4C:11:22:33:44:55"
        let other = directory + "/bluetooth/00:1A:7D:DA:71:13/00:22:33:44:55:66"
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: directory + "/bluetooth/cache", withIntermediateDirectories: true)
        try """
        [General]
        Name=Alice's iPhone
        Class=0x7a020c
        SupportedTechnologies=LE;

        [IdentityResolvingKey]
        Key=\(Self.keyReversed.uppercased())

        [LongTermKey]
        Key=00112233445566778899AABBCCDDEEFF
        """.write(toFile: device + "/info", atomically: true, encoding: .utf8)
        try "[General]\nName=Headphones\n".write(toFile: other + "/info", atomically: true, encoding: .utf8)
        let keys = directory + "/keys"

        let run = try await BuiltBinary.run([
            "keys", "import-bluez", "--bluetooth-dir", directory + "/bluetooth", "--keys-dir", keys,
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.contains("- name: alices-iphone"))
        #expect(run.stdout.contains("irk_file: \(keys)/alices-iphone.irk"))
        #expect(run.stdout.contains("Alice's iPhone (4C:11:22:33:44:55"))
        #expect(!run.stdout.contains("headphones"))
        #expect(!Self.containsKey(run.stdout + run.stderr))
        let file = keys + "/alices-iphone.irk"
        #expect(try String(contentsOfFile: file, encoding: .utf8) == Self.keyReversed + "\n")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // Again: the same key is left alone; a different key under the name is not overwritten.
        let again = try await BuiltBinary.run([
            "keys", "import-bluez", "--bluetooth-dir", directory + "/bluetooth", "--keys-dir", keys,
        ])
        #expect(again.status == 0)
        let renamed = try await BuiltBinary.run([
            "keys", "import-bluez", "--bluetooth-dir", directory + "/bluetooth", "--keys-dir", keys,
            "--device", "4c:11:22:33:44:55", "--name", "phone",
        ])
        #expect(renamed.status == 0)
        #expect(renamed.stdout.contains("- name: phone"))
        try "00112233445566778899aabbccddeeff\n".write(toFile: keys + "/other.irk", atomically: true, encoding: .utf8)
        let clash = try await BuiltBinary.run([
            "keys", "import-bluez", "--bluetooth-dir", directory + "/bluetooth", "--keys-dir", keys,
            "--device", "4C:11:22:33:44:55", "--name", "other",
        ])
        #expect(clash.status == 73)
        #expect(clash.stderr.contains("holds another key; not overwritten"))

        let missing = try await BuiltBinary.run(["keys", "import-bluez", "--bluetooth-dir", directory + "/none"])
        #expect(missing.status == 66)
        let nothing = try await BuiltBinary.run([
            "keys", "import-bluez", "--bluetooth-dir", directory + "/bluetooth",
            "--device", "00:22:33:44:55:66", "--keys-dir", keys,
        ])
        #expect(nothing.status == 66)
        #expect(nothing.stderr.contains("no paired device with an identity resolving key"))
        let usage = try await BuiltBinary.run(["keys", "import-bluez", "--name", "x"])
        #expect(usage.status == 64)
    }

    @Test func replayFollowsRotatingAddressesAsOneDeviceAndLeaksNoKey() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let keyFile = bed.directory + "/phone.irk"
        // Written byte-reversed: the gateway finds the order itself and records it.
        try (Self.keyReversed + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        try bed.writeConfig(
            """
            formats:
              include_devices: true
            tracking:
              away_timeout_s: 5
            devices:
              known:
                - name: phone
                  irk_file: \(keyFile)
                  measured_power: -62
                  away_timeout_s: 120
            regions:
              - name: hall
                match: {format: irk, identifiers: [phone]}
                min_dwell_s: 0
            """)
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }

        // The phone rotates through three addresses over 30 s; a stranger's phone (unknown key) is heard too.
        let key = try #require(IdentityResolvingKey(text: Self.keyAsWritten))
        let stranger = try #require(IdentityResolvingKey(text: "00112233445566778899aabbccddeeff"))
        let start = Date().timeIntervalSince1970 - 60
        let mine = [0x1A2B3C, 0x2B3C4D, 0x3C4D5E].map {
            BluetoothAddress.resolvablePrivate(prand: UInt32($0), key: key)
        }
        let theirs = BluetoothAddress.resolvablePrivate(prand: 0x0F0F0F, key: stranger)
        var observations: [Observation] = []
        for step in 0..<60 {
            let time = start + Double(step) * 0.5
            // An iBeacon from the phone's current address (an app advertising), then the stranger's iBeacon.
            observations.append(
                Observation(
                    timestamp: time, beaconID: "", format: "ibeacon", identifiers: [Self.uuid, "7", "7"],
                    address: mine[step / 20], addressType: .randomDevice, rssi: -60, measuredPower: -59))
            observations.append(
                Observation(
                    timestamp: time + 0.1, beaconID: "", format: "ibeacon", identifiers: [Self.uuid, "9", "9"],
                    address: theirs, addressType: .randomDevice, rssi: -70, measuredPower: -59))
        }
        let capture = try bed.writeCapture("phones.btsnoop", observations)
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 120)
        #expect(run.status == 0, "stderr: \(run.stderr)")

        let phone = "\(bed.topicBase)/presence/irk:phone"
        try await waitUntil("the phone's away", timeout: 60) {
            subscriber.messages(under: phone).contains { $0.string("state") == "away" }
        }
        #expect(subscriber.messages(under: phone).map { $0.string("state") } == ["seen", "away"])
        let sightings = subscriber.messages(under: "\(bed.topicBase)/sighting/irk:phone")
        #expect(Set(sightings.compactMap { $0.string("mac") }) == Set(mine.map(\.description)))
        #expect(sightings.allSatisfy { $0.string("format") == "irk" })
        #expect(
            subscriber.messages(under: "\(bed.topicBase)/region/hall/irk:phone").contains {
                $0.string("event") == "enter"
            })
        let all = subscriber.messages(under: "")
        #expect(!all.contains { $0.topic.contains("mac:") }, "no device sighting of any private address")
        #expect(!all.contains { $0.payload.contains(theirs.description) && $0.topic.contains("irk:") })
        #expect(
            all.contains { $0.topic.hasSuffix("sighting/ibeacon:\(Self.uuid):9:9") },
            "beacons with their own id still published")
        #expect(!Self.containsKey(run.stdout + run.stderr))
        #expect(!all.contains { Self.containsKey($0.topic) || Self.containsKey($0.payload) })

        // The byte order that matched, from the state database.
        let check = try await BuiltBinary.run(["check-config", "--config", bed.configPath])
        #expect(check.status == 0, "stderr: \(check.stderr)")
        #expect(check.stdout.contains("devices: 1 with identity resolving keys"))
        #expect(check.stdout.contains("phone (irk:phone): key order reversed, last seen"))
        let keys = try await BuiltBinary.run(["keys", "check", "--config", bed.configPath])
        #expect(keys.status == 0, "stderr: \(keys.stderr)")
        let configured = try #require(IdentityResolvingKey(text: Self.keyReversed))
        #expect(
            keys.stdout.contains(
                "phone (irk:phone): key \(configured.fingerprint) from irk_file, key order reversed, last seen"))
        #expect(!Self.containsKey(check.stdout + check.stderr + keys.stdout + keys.stderr))
    }

    /// SIGHUP adds a device: a phone that was dropped as an unknown private address becomes `irk:phone`.
    @Test func sighupAddsADevice() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig("formats:\n  include_devices: true\n")
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let key = try #require(IdentityResolvingKey(text: Self.keyAsWritten))
        let address = BluetoothAddress.resolvablePrivate(prand: 0x2A2A2A, key: key)
        let now = Date().timeIntervalSince1970
        let observations = stride(from: 0.0, to: 60, by: 0.25).map { offset in
            Observation(
                timestamp: now + offset, beaconID: "", format: "ibeacon", identifiers: [Self.uuid, "5", "5"],
                address: address, addressType: .randomDevice, rssi: -58, measuredPower: -59)
        }
        let capture = try bed.writeCapture("phone.btsnoop", observations)
        let daemon = try DaemonProcess(arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath])
        try await waitUntil("the phone's iBeacon seen", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/presence/").contains { $0.string("state") == "seen" }
        }
        #expect(!subscriber.messages(under: "").contains { $0.topic.contains("irk:") || $0.topic.contains("mac:") })

        try bed.writeConfig(
            """
            formats:
              include_devices: true
            devices:
              known:
                - name: phone
                  irk: \(Self.keyBase64)
            """)
        daemon.signal(SIGHUP)
        try await waitUntil("the phone seen as irk:phone", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/presence/irk:phone").contains { $0.string("state") == "seen" }
        }
        #expect(daemon.stderr.contains("configuration reloaded"))
        #expect(!subscriber.messages(under: "").contains { $0.topic.contains("mac:") })
        daemon.signal(SIGTERM)
        #expect(await daemon.waitForExit(timeout: 30) == 0)
        #expect(!Self.containsKey(daemon.stderr))
    }
}
