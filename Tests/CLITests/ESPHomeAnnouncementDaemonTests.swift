import BeaconModel
import Foundation
import TestSupport
import Testing

/// The daemon's mDNS announcement (`esphome_api.mdns: true`) with a fake `avahi-publish-service` first on
/// PATH (a shell script that behaves as the real tool does: its messages on stderr, "Established under name
/// 'NAME'" once avahi-daemon announced the service, "Failed to create client object: ..." and exit 1 when it
/// cannot reach avahi-daemon). The daemon logs "announced through mDNS" only after the confirmation, logs every
/// failure with the child's line, starts it again with backoff, counts both in telemetry, and ends the child at
/// stop. (The real tool against a real avahi-daemon: the systemd stage's `mdns` scenario, docs/e2e.md.)
@Suite(.serialized) struct ESPHomeAnnouncementDaemonTests {
    /// Call 1 fails as on a refused system bus; call 2 confirms, then loses avahi-daemon after 1 s; call 3
    /// confirms and stays. Every call writes its arguments and its pid.
    static let fakeTool = """
        #!/bin/sh
        dir=$(dirname "$0")
        n=$(cat "$dir/count" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$dir/count"
        printf '%s\\n' "$@" > "$dir/args.$n"
        echo "$$" > "$dir/pid.$n"
        case "$n" in
        1) echo "Failed to create client object: An unexpected D-Bus error occurred" >&2; exit 1 ;;
        2) sleep 1; echo "Established under name '$2'" >&2; sleep 1
           echo "Client failure, exiting: Daemon connection failed" >&2; exit 1 ;;
        *) sleep 1; echo "Established under name '$2'" >&2; exec sleep 600 ;;
        esac
        """

    /// The log lines (in order) whose `msg=` is exactly `message`.
    func lines(_ log: String, _ message: String) -> [String] {
        let quoted = "msg=" + (message.contains(" ") ? "\"\(message)\"" : message) + " "
        return log.split(separator: "\n").map(String.init).filter {
            $0.contains(quoted) || $0.hasSuffix(quoted.dropLast())
        }
    }

    func counter(_ message: TestSubscriber.Message, _ key: String) -> Int64? {
        guard case let .int(value)? = message.json?["counters"]?[key] else { return nil }
        return value
    }

    @Test func announcedOnlyWhenAvahiConfirmsAndFailuresAreLoggedAndRetried() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let tools = bed.directory + "/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        try ExecutableScript.write(Self.fakeTool, to: tools + "/avahi-publish-service")
        let port = try FreePort.find()
        try bed.writeConfig(
            """
            esphome_api:
              enabled: true
              bind: 127.0.0.1
              port: \(port)
              name: lab-pi
              friendly_name: Lab Pi
              mdns: true
            """)
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let start = Date().timeIntervalSince1970
        let capture = try bed.writeCapture(
            "slow.btsnoop", DaemonTestBed.iBeaconObservations(minor: 1, start: start, duration: 120, interval: 1))
        let daemon = try DaemonProcess(
            arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath],
            environment: ["PATH": tools + ":/usr/bin:/bin"], cleanEnvironment: true)

        // failed (call 1), announced (call 2), failed (call 2 lost the daemon), announced (call 3).
        try await waitUntil("two announcements after two failures", timeout: 60) {
            lines(daemon.stderr, "announced through mDNS").count >= 2
        }
        let log = daemon.stderr
        let events = log.split(separator: "\n").map(String.init).filter {
            $0.contains("msg=\"announced through mDNS\"") || $0.contains("msg=\"mDNS announcement failed\"")
        }
        #expect(events.count == 4, "stderr: \(log)")
        let order = events.map { $0.contains("msg=\"announced") ? "announced" : "failed" }
        #expect(order == ["failed", "announced", "failed", "announced"], "stderr: \(log)")
        let failures = lines(log, "mDNS announcement failed")
        #expect(
            failures.first?.contains(
                "reason=\"Failed to create client object: An unexpected D-Bus error occurred (exit status 1)\"")
                == true, "\(failures)")
        #expect(failures.first?.contains("attempt=1 ") == true && failures.first?.contains("retry_in_s=2") == true)
        #expect(failures.first?.contains("hint=") == true)  // the D-Bus case names the static file
        #expect(failures.last?.contains("reason=\"Client failure, exiting: Daemon connection failed") == true)
        #expect(failures.last?.contains("attempt=2 ") == true && failures.last?.contains("retry_in_s=4") == true)
        #expect(failures.last?.contains("hint=") == false)
        #expect(lines(log, "announced through mDNS").allSatisfy { $0.contains("name=lab-pi") })
        #expect(!log.contains("not announced through mDNS"))

        // What the tool was asked to announce: the proxy's port and Home Assistant's TXT records.
        let arguments = try String(contentsOfFile: tools + "/args.3", encoding: .utf8).split(separator: "\n")
        #expect(Array(arguments.prefix(4)) == ["--", "lab-pi", "_esphomelib._tcp", "\(port)"])
        #expect(arguments.contains("friendly_name=Lab Pi"))
        #expect(arguments.contains { $0.hasPrefix("mac=") && $0.count == 16 })
        #expect(!arguments.contains { $0.hasPrefix("api_encryption") })

        // Telemetry: announced now, two failures so far.
        try await waitUntil("telemetry with the announcement", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/telemetry").contains {
                counter($0, "esphome_mdns_announced") == 1 && counter($0, "esphome_mdns_failures") == 2
            }
        }

        // Stop: the daemon ends the child (the third call's process, which would sleep for 10 minutes).
        let child = try #require(
            Int32(
                try String(contentsOfFile: tools + "/pid.3", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines)))
        #expect(kill(child, 0) == 0)
        daemon.signal(SIGTERM)
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 0, "stderr: \(daemon.stderr)")
        #expect(kill(child, 0) == -1 && errno == ESRCH, "the announcement child \(child) outlived the daemon")
    }

    /// Call 1 reports "Failed to register" and keeps running (as the real tool does); every later call finds no
    /// avahi-daemon and exits 1.
    static let failingTool = """
        #!/bin/sh
        dir=$(dirname "$0")
        n=$(cat "$dir/count" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$dir/count"
        echo "$$" > "$dir/pid.$n"
        if [ "$n" = 1 ]; then echo "Failed to register: Not permitted" >&2; exec sleep 600; fi
        echo "Failed to create client object: Daemon not running" >&2; exit 1
        """

    @Test func aChildThatFailsToRegisterIsEndedAndRetried() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let tools = bed.directory + "/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        try ExecutableScript.write(Self.failingTool, to: tools + "/avahi-publish-service")
        try bed.writeConfig(
            """
            esphome_api:
              enabled: true
              bind: 127.0.0.1
              port: \(try FreePort.find())
            """)
        let capture = try bed.writeCapture(
            "slow.btsnoop",
            DaemonTestBed.iBeaconObservations(
                minor: 1, start: Date().timeIntervalSince1970, duration: 120, interval: 1))
        let daemon = try DaemonProcess(
            arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath],
            environment: ["PATH": tools + ":/usr/bin:/bin"], cleanEnvironment: true)
        try await waitUntil("two failures", timeout: 60) {
            lines(daemon.stderr, "mDNS announcement failed").count >= 2
        }
        let failures = lines(daemon.stderr, "mDNS announcement failed")
        // The first child kept running after "Failed to register": the daemon ended it with SIGTERM.
        #expect(
            failures[0].contains("reason=\"Failed to register: Not permitted (killed by signal 15)\""), "\(failures)")
        #expect(failures[0].contains("hint=") == false)
        #expect(failures[1].contains("reason=\"Failed to create client object: Daemon not running (exit status 1)\""))
        #expect(failures[1].contains("attempt=2 ") && failures[1].contains("retry_in_s=4"))
        #expect(lines(daemon.stderr, "announced through mDNS").isEmpty)
        let first = try #require(
            Int32(
                try String(contentsOfFile: tools + "/pid.1", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines)))
        #expect(kill(first, 0) == -1 && errno == ESRCH)
        // SIGTERM (most likely while the announcement waits 4 s to retry): a clean exit.
        daemon.signal(SIGTERM)
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 0, "stderr: \(daemon.stderr)")
    }

    @Test func withoutTheToolTheLogSaysNotAnnounced() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let empty = bed.directory + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try bed.writeConfig(
            """
            esphome_api:
              enabled: true
              bind: 127.0.0.1
              port: \(try FreePort.find())
            """)
        let capture = try bed.writeCapture(
            "short.btsnoop",
            DaemonTestBed.iBeaconObservations(minor: 1, start: 1_700_000_000, duration: 5, interval: 1))
        let run = try await BuiltBinary.run(
            ["replay", capture, "--config", bed.configPath], environment: ["PATH": empty], cleanEnvironment: true,
            timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let notAnnounced = lines(run.stderr, "not announced through mDNS")
        #expect(notAnnounced.count == 1, "stderr: \(run.stderr)")
        #expect(
            notAnnounced.first?.contains("avahi-publish-service is not on PATH \(empty) (package avahi-utils)") == true)
        #expect(lines(run.stderr, "announced through mDNS").isEmpty)
        #expect(lines(run.stderr, "mDNS announcement failed").isEmpty)
    }
}
