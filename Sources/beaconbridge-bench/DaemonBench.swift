import Foundation
import TestSupport

/// `beaconbridge run`'s cost in real time: the release `beaconbridge replay CAPTURE --speed 1` (the whole
/// pipeline: replay source, decoder, tracker, regions, SQLite outbox, MQTT) fed 5,000 reports/s from 500
/// beacons, with a real mosquitto on a free loopback port and a `mosquitto_sub` counting what arrives.
/// CPU time and RSS of every child are sampled from /proc every 5 s.
///
/// Phase 1 (`BENCH_DAEMON_SECONDS`, default 60; 600 for the drift run): CPU share of one core after the first minute, RSS at
/// minute 1 and at the end (drift). Alongside it, as in-run references, an idle gateway (same binary and
/// settings, a capture with nothing to track) and the `mosquitto_sub` subscriber.
/// Phase 2 (a quarter of that, 60...150 s): 1,000 beacons at 1 report/s each, steady-state RSS.
/// Bounded: each phase ends at its capture length + 90 s at the latest; every child is stopped on the way out.
enum DaemonBench {
    static let sampleInterval: Double = 5

    static func run() {
        do { try measure() } catch { print("  failed: \(error)") }
    }

    static func measure() throws {
        let seconds = max(20, min(3600, Int(ProcessInfo.processInfo.environment["BENCH_DAEMON_SECONDS"] ?? "") ?? 60))
        let binary = gatewayBinary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("  skipped: \(binary) not built (make bench builds it: swift build -c release)")
            return
        }
        let directory = try makeDirectory()
        defer {
            // BENCH_KEEP=1 keeps the captures, configs and logs (for profiling a replay by hand).
            if ProcessInfo.processInfo.environment["BENCH_KEEP"] == "1" {
                print("    kept \(directory)")
            } else {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
        let broker = try BenchBroker(directory: directory)
        let subscriber = try DaemonBenchProcess(
            "mosquitto_sub", executable: "/usr/bin/mosquitto_sub",
            arguments: [
                "-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", "beaconbridge/bench-busy/#", "-F", "%t",
            ],
            stdout: directory + "/received.txt")
        defer { subscriber.stop() }
        usleep(300_000)

        print(
            "  phase 1: 500 beacons x 10 reports/s = 5,000 reports/s for \(seconds) s, replay at speed 1, broker on 127.0.0.1:\(broker.port)"
        )
        let start = Date().timeIntervalSince1970.rounded()
        let generated = Date()
        let events = try DaemonBenchCapture.write(
            path: directory + "/busy.btsnoop", beacons: 500, rate: 10, seconds: seconds, start: start)
        // Longer than the busy capture, so the idle reference is still running at the busy gateway's last sample.
        try DaemonBenchCapture.writeIdle(path: directory + "/idle.btsnoop", seconds: seconds + 120, start: start)
        let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/busy.btsnoop")[.size] as? Int) ?? 0
        print(
            "    capture: \(events) events, \(size / 1_048_576) MiB, written in \(format(Date().timeIntervalSince(generated), 1)) s"
        )

        let busyConfig = try writeConfig(directory: directory, name: "busy", port: broker.port)
        let idleConfig = try writeConfig(directory: directory, name: "idle", port: broker.port)
        let busy = try DaemonBenchProcess(
            "beaconbridge", executable: binary,
            arguments: ["replay", directory + "/busy.btsnoop", "--speed", "1", "--config", busyConfig],
            stderr: directory + "/busy.log")
        let idle = try DaemonBenchProcess(
            "idle beaconbridge", executable: binary,
            arguments: ["replay", directory + "/idle.btsnoop", "--speed", "1", "--config", idleConfig],
            stderr: directory + "/idle.log")
        defer {
            busy.stop()
            idle.stop()
        }
        let phase1 = DaemonBenchSampler(processes: [busy, idle, subscriber, broker.process], interval: sampleInterval)
        phase1.run(until: busy, deadline: Double(seconds) + 90)
        let busyStatus = busy.waitForExit(timeout: 1)
        let idleStatus = idle.waitForExit(timeout: 0)
        idle.stop()
        usleep(500_000)
        let received =
            (try? String(contentsOfFile: directory + "/received.txt", encoding: .utf8))?.split(separator: "\n").count
            ?? 0
        report(
            phase1: phase1, seconds: seconds, busyStatus: busyStatus, log: directory + "/busy.log", received: received)
        if let idleStatus, idleStatus != 0 {
            let lines = ((try? String(contentsOfFile: directory + "/idle.log", encoding: .utf8)) ?? "").split(
                separator: "\n")
            print("    the idle gateway exited with \(idleStatus): \(lines.suffix(2).joined(separator: " | "))")
        }

        let phase2Seconds = max(60, min(150, seconds / 4))
        print("  phase 2: 1,000 beacons x 1 report/s for \(phase2Seconds) s, replay at speed 1")
        let start2 = Date().timeIntervalSince1970.rounded()
        _ = try DaemonBenchCapture.write(
            path: directory + "/many.btsnoop", beacons: 1000, rate: 1, seconds: phase2Seconds, start: start2)
        let manyConfig = try writeConfig(directory: directory, name: "many", port: broker.port)
        let many = try DaemonBenchProcess(
            "beaconbridge", executable: binary,
            arguments: ["replay", directory + "/many.btsnoop", "--speed", "1", "--config", manyConfig],
            stderr: directory + "/many.log")
        defer { many.stop() }
        let phase2 = DaemonBenchSampler(processes: [many], interval: sampleInterval)
        phase2.run(until: many, deadline: Double(phase2Seconds) + 90)
        let steady = phase2.samples.filter { $0.time >= Double(phase2Seconds) / 2 && $0.time <= Double(phase2Seconds) }
            .compactMap { $0.rss[0] }.sorted()
        if let median = steady.isEmpty ? nil : steady[steady.count / 2], let peak = steady.last {
            print(
                "    steady-state RSS with 1,000 beacons: \(mb(median)) MB median over the second half (max \(mb(peak)) MB); goal < 16 MB"
            )
        } else {
            print("    steady-state RSS with 1,000 beacons: no samples (gateway log: \(directory)/many.log)")
        }
        if let status = many.waitForExit(timeout: 10), status != 0 { print("    gateway exited with \(status)") }
    }

    static func report(phase1: DaemonBenchSampler, seconds: Int, busyStatus: Int32?, log: String, received: Int) {
        let samples = phase1.samples.filter { $0.cpu[0] != nil }
        guard let last = samples.last, let lastCPU = last.cpu[0] else {
            print("    no samples of the gateway")
            return
        }
        // "Minute 1": the first sample at or after 60 s (or halfway through a run shorter than two minutes).
        let mark = seconds >= 120 ? 60.0 : Double(seconds) / 2
        let first = samples.first { $0.time >= mark } ?? samples[0]
        let window = last.time - first.time
        func share(_ index: Int) -> String {
            guard let from = first.cpu[index], let to = last.cpu[index], window > 0 else { return "n/a" }
            return format((to - from) / window * 100, 2) + " %"
        }
        print(
            "    gateway CPU: \(share(0)) of one core from t=\(Int(first.time)) s to t=\(Int(last.time)) s "
                + "(\(format(lastCPU / last.time * 100, 2)) % over the whole run incl. start); goal < 2 %")
        if let from = first.rss[0], let to = last.rss[0] {
            let peak = samples.compactMap { $0.rss[0] }.max() ?? to
            print(
                "    gateway RSS: \(mb(from)) MB at t=\(Int(first.time)) s, \(mb(to)) MB at t=\(Int(last.time)) s: drift "
                    + "\(format(Double(to - from) / 1_048_576, 2)) MB (goal < 0.5 MB over 10 minutes); peak \(mb(peak)) MB"
            )
        }
        print(
            "    reference, idle gateway (same binary, nothing to track): CPU \(share(1)), RSS \(last.rss[1].map(mb) ?? "n/a") MB"
        )
        print(
            "    reference, mosquitto_sub (receives every event of the gateway): CPU \(share(2)), RSS \(last.rss[2].map(mb) ?? "n/a") MB;"
                + " mosquitto broker: CPU \(share(3))")
        let stopped = stoppedSummary(log: log)
        func logValue(_ key: String) -> String { stopped[key] ?? "?" }
        print(
            "    messages received by the subscriber: \(received) (gateway: \(logValue("events")) events submitted, "
                + "\(logValue("published")) published, \(logValue("hci_events")) HCI events); exit status \(busyStatus.map(String.init) ?? "still running")"
        )
    }

    /// The release `beaconbridge` next to this bench binary, or `BENCH_GATEWAY` when set (an A/B of two builds
    /// in one session: the same bench run against each binary).
    static var gatewayBinary: String {
        if let path = ProcessInfo.processInfo.environment["BENCH_GATEWAY"], !path.isEmpty { return path }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
            + "/beaconbridge"
    }

    /// The key=value pairs of the gateway's last `msg=stopped` log line (its end-of-run counters).
    static func stoppedSummary(log: String) -> [String: String] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let stopped = text.split(separator: "\n").last { $0.contains("msg=stopped") } ?? ""
        var values: [String: String] = [:]
        for field in stopped.split(separator: " ") {
            guard let equals = field.firstIndex(of: "=") else { continue }
            values[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
        return values
    }

    /// `extra`: more top-level YAML sections, appended as they are.
    static func writeConfig(directory: String, name: String, port: Int, extra: String = "") throws -> String {
        let uuid = DaemonBenchCapture.uuid
        let yaml = """
            gateway:
              id: bench-\(name)
            logging:
              level: notice
            telemetry:
              interval_s: 60
            regions:
              - name: near
                match: {format: ibeacon, uuid: \(uuid), major: 0}
                enter: {rssi_above: -65}
              - name: heard
                match: {format: ibeacon, uuid: \(uuid)}
                enter: {rssi_above: -90}
            mqtt:
              host: 127.0.0.1
              port: \(port)
            outbox:
              path: \(directory)/\(name).sqlite
            \(extra)
            """
        let path = directory + "/\(name).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func makeDirectory() throws -> String { try TestDirectory.make(prefix: "beaconbridge-bench") }

    static func mb(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576, 1) }

    static func format(_ value: Double, _ places: Int) -> String { String(format: "%.\(places)f", value) }
}
