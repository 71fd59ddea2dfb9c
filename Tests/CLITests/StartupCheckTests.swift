import BeaconModel
import Foundation
import SQLiteStore
import TestSupport
import Testing

/// Issue 17, items 5 (at start), 6, 10 and 12: `check-config` rejects what the daemon cannot use, and `run`
/// refuses the same with the same lines (one validation, two callers); the database is usable or nothing
/// starts; a damaged file is moved aside; sequence numbers keep increasing across restarts.
@Suite(.serialized) struct StartupCheckTests {
    /// A config in a temp directory: the bed's broker port and outbox, `extra` YAML appended.
    static func write(_ bed: DaemonTestBed, outbox: String? = nil, _ extra: String = "") throws {
        try bed.writeConfig(extra, room: nil, telemetry: nil, outbox: outbox)
    }

    /// The `FILE:LINE:COL: KEYPATH: ...` lines of `stderr` for the config file.
    static func located(_ stderr: String, _ bed: DaemonTestBed) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter {
            $0.hasPrefix(bed.configPath + ":") && !$0.hasPrefix(bed.configPath + ": ")
        }
    }

    @Test(arguments: [
        ("topics:\n  prefix: \"home\\u0007bridge\"", "topics.prefix", "control characters (found U+0007)"),
        ("topics:\n  prefix: \"home\\uFFFE\"", "topics.prefix", "noncharacters (found U+FFFE)"),
        ("topics:\n  prefix: \"a\\uFDD0\"", "topics.prefix", "noncharacters (found U+FDD0)"),
        (
            "topics:\n  home_assistant:\n    discovery_prefix: \"ha\\u001B\"", "topics.home_assistant.discovery_prefix",
            "control characters"
        ),
    ])
    func valuesLibmosquittoRefusesAreConfigurationErrorsForCheckConfigAndRun(yaml: String, key: String, message: String)
        async throws
    {
        let bed = try DaemonTestBed()
        try Self.write(bed, yaml)
        for command in ["check-config", "run"] {
            let result = try await BuiltBinary.run([command, "--config", bed.configPath], timeout: 60)
            #expect(result.status == 78, "\(command): \(result.stderr)")
            let lines = Self.located(result.stderr, bed)
            #expect(lines.count == 1, "\(command): \(result.stderr)")
            #expect(
                lines.first.map { $0.contains(": \(key): ") && $0.contains(message) } == true,
                "\(command): \(result.stderr)")
        }
    }

    @Test func clientIDAndUserNameFollowTheSameRule() async throws {
        let bed = try DaemonTestBed()
        let yaml = """
            gateway:
              id: \(bed.gatewayID)
            mqtt:
              host: 127.0.0.1
              port: \(bed.broker.port)
              client_id: "gw\\uFFFF"
              username: "user\\u0001x"
            outbox:
              path: \(bed.outboxPath)
            """
        try yaml.write(toFile: bed.configPath, atomically: true, encoding: .utf8)
        let result = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(result.status == 78, "\(result.stderr)")
        let lines = Self.located(result.stderr, bed)
        #expect(
            lines.contains {
                $0.contains(":6:")
                    && $0.contains("mqtt.client_id: must not contain Unicode noncharacters (found U+FFFF)")
            }, "\(result.stderr)")
        #expect(
            lines.contains {
                $0.contains(":7:") && $0.contains("mqtt.username: must not contain control characters (found U+0001)")
            }, "\(result.stderr)")
    }

    @Test func anOutboxPathThatCannotHoldADatabaseIsNamedByCheckConfigAndStopsRun() async throws {
        let bed = try DaemonTestBed()
        let directory = bed.directory + "/state"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let regular = bed.directory + "/plain-file"
        try "x".write(toFile: regular, atomically: true, encoding: .utf8)
        let cases: [(path: String, message: String)] = [
            (directory, "is a directory"),
            (
                bed.directory + "/missing/deeper/outbox.sqlite",
                "directory `\(bed.directory)/missing/deeper` does not exist, nor does its parent"
            ),
            (regular + "/outbox.sqlite", "is not a directory"),
            ("/proc/beaconbridge-outbox.sqlite", "cannot create files in `/proc`"),
        ]
        for (path, message) in cases {
            try Self.write(bed, outbox: path)
            let check = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
            #expect(check.status == 78, "\(path): \(check.stderr)")
            let lines = Self.located(check.stderr, bed)
            #expect(
                lines.count == 1 && lines[0].contains(":9:9: outbox.path: ") && lines[0].contains(message),
                "\(path): \(check.stderr)")
            // The daemon refuses the same file with the same line instead of running memory-only.
            let run = try await BuiltBinary.run(["run", "--config", bed.configPath], timeout: 60)
            #expect(run.status == 78, "\(path): \(run.stderr)")
            #expect(Self.located(run.stderr, bed) == lines, "\(path): \(run.stderr)")
            #expect(run.stderr.contains("nothing started"))
        }
        // Nothing was left behind by the checks (the probe file is removed).
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    /// Issue 32: a missing state directory whose parent exists (`/var/lib/beaconbridge` before the package's
    /// unit ran) is no problem for `check-config`, and the daemon creates it (mode 0700) with the database.
    @Test func aMissingStateDirectoryIsCreatedAtStart() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let state = bed.directory + "/state-new"
        try Self.write(bed, outbox: state + "/outbox.sqlite")
        let check = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(Self.located(check.stderr, bed).isEmpty, "\(check.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state), "check-config creates nothing")
        let capture = try bed.writeCapture(
            "short.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970 - 60, duration: 5, interval: 1))
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 120)
        #expect(run.status == 0, "\(run.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: state)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        #expect(FileManager.default.fileExists(atPath: state + "/outbox.sqlite"))
    }

    @Test func aDamagedDatabaseIsMovedAsideKeptAndReplacedAtStart() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try Self.write(bed)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: bed.outboxPath))
        // check-config warns (the file will be moved aside) but accepts the file.
        let check = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(
            check.stderr.contains("outbox.path: warning: `\(bed.outboxPath)` is not an SQLite database"),
            "\(check.stderr)")

        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let capture = try bed.writeCapture(
            "a.btsnoop", DaemonTestBed.iBeaconObservations(minor: 1, start: 1_700_000_000, duration: 10, interval: 1))
        let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 90)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("level=critical"), "\(run.stderr)")
        #expect(run.stderr.contains("database was damaged: moved aside and a new one created"), "\(run.stderr)")
        let moved = try #require(logValue(run.stderr, message: "database was damaged", key: "moved_to"))
        #expect(moved.hasPrefix(bed.outboxPath + ".damaged-"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == garbage)
        // A fresh, private database took its place, and the events went out.
        let header = try Data(contentsOf: URL(fileURLWithPath: bed.outboxPath)).prefix(16)
        #expect(header == Data("SQLite format 3\0".utf8))
        let attributes = try FileManager.default.attributesOfItem(atPath: bed.outboxPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try await waitUntil("the beacon's presence", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/presence/").contains {
                $0.string("beacon_id") == bed.beaconID(minor: 1)
            }
        }
    }

    /// `seq` strictly increasing across restarts: a normal run, a run whose database was damaged (moved aside;
    /// numbers from a fresh database, seeded from the wall clock), and a normal run again. (A run without a
    /// usable database numbering from the wall clock is covered in SQLiteStoreTests.DatabaseStartTests.)
    @Test func sequenceNumbersKeepIncreasingAcrossEveryRestart() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try Self.write(bed)
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        var runs: [[UInt64]] = []
        for round in 0..<3 {
            if round == 1 {
                try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: bed.outboxPath))
                for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: bed.outboxPath + suffix) }
            }
            let before = subscriber.messages.count
            let capture = try bed.writeCapture(
                "r\(round).btsnoop",
                DaemonTestBed.iBeaconObservations(minor: 10 + round, start: 1_700_000_000, duration: 5, interval: 1))
            let run = try await BuiltBinary.run(["replay", capture, "--config", bed.configPath], timeout: 90)
            #expect(run.status == 0, "\(run.stderr)")
            try await waitUntil("round \(round)'s presence", timeout: 60) {
                subscriber.messages(under: "\(bed.topicBase)/presence/").contains {
                    $0.string("beacon_id") == bed.beaconID(minor: 10 + round)
                }
            }
            runs.append(Array(subscriber.messages[before...]).compactMap(\.sequence))
        }
        for (earlier, later) in zip(runs, runs.dropFirst()) {
            let last = try #require(earlier.max())
            let first = try #require(later.min())
            #expect(first > last, "runs: \(runs)")
        }
    }

    @Test func warningsForReadableSecretsAndUnverifiedTLSDoNotFailTheCheck() async throws {
        let bed = try DaemonTestBed()
        let password = bed.directory + "/mqtt-password"
        try "secret\n".write(toFile: password, atomically: true, encoding: .utf8)
        #expect(chmod(password, 0o644) == 0)
        let yaml = """
            gateway:
              id: \(bed.gatewayID)
            mqtt:
              host: 127.0.0.1
              port: \(bed.broker.port)
              username: gw
              password_file: \(password)
              tls:
                ca_dir: /etc/ssl/certs
                verify: false
            outbox:
              path: \(bed.outboxPath)
            """
        try yaml.write(toFile: bed.configPath, atomically: true, encoding: .utf8)
        let check = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(
            check.stderr.contains(
                "\(bed.configPath):7:18: mqtt.password_file: warning: `\(password)` holds a secret and every user can read it (mode 0644)"
            ), "\(check.stderr)")
        #expect(check.stderr.contains(":10:13: mqtt.tls.verify: warning: false"), "\(check.stderr)")
        #expect(!check.stderr.contains("secret\n"))
        #expect(chmod(password, 0o600) == 0)
        let quiet = try await BuiltBinary.run(["check-config", "--config", bed.configPath], timeout: 60)
        #expect(!quiet.stderr.contains("password_file: warning"), "\(quiet.stderr)")
    }

    @Test func simulateCaptureRefusesAPlantedSymlinkAndWritesPrivateFiles() async throws {
        let bed = try DaemonTestBed()
        let scenario = BuiltBinary.packageRoot + "/config/scenarios/demo.json"
        let target = bed.directory + "/victim"
        try "keep me".write(toFile: target, atomically: true, encoding: .utf8)
        let link = bed.directory + "/out.btsnoop"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try await BuiltBinary.run(
            ["simulate", "--scenario", scenario, "--summary-only", "--capture", link], timeout: 120)
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("symbolic link"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")

        let plain = bed.directory + "/plain.btsnoop"
        let written = try await BuiltBinary.run(
            ["simulate", "--scenario", scenario, "--summary-only", "--capture", plain], timeout: 120)
        #expect(written.status == 0, "\(written.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: plain)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
