import Foundation

/// `beaconbridge run`'s cost on the live path: the release binary reads H4 advertising reports through its
/// real `HCIScanner` reading thread and queue (`--hci-feed 0`, a `SOCK_SEQPACKET` socket pair standing in for
/// the controller; this machine has no `hci_vhci`), then the daemon loop, pipeline, SQLite outbox and MQTT
/// publisher to a real mosquitto on a free loopback port. `LiveBenchFeeder` writes 500 iBeacons' reports at a
/// fixed rate. CPU time and RSS of the gateway, a `mosquitto_sub` subscribed to its topics and the broker are
/// sampled from /proc every 5 s (docs/daemon-bench.md).
///
/// 1. Default publish policy at 500 and 5,000 reports/s: the gateway's CPU share of one core against the
///    goals (< 0.5 % and < 2 %), RSS and its drift. `BENCH_DRIFT_SECONDS` (e.g. 600) makes the 5,000/s run
///    that long and measures drift from minute 1.
/// 2. A sighting published for every report (`sighting_interval_s: 0`) at 100, 500 and 5,000 reports/s: the
///    gateway's CPU per report next to what `mosquitto_sub` spends receiving the same messages, measured over
///    the same window (goal: at most twice).
enum LiveBench {
    static let sampleInterval: Double = 5

    struct Result {
        var rate: Int
        var window: Double
        /// Reports fed within the window.
        var reports: Int
        var gatewayCPU: Double
        var subscriberCPU: Double
        var brokerCPU: Double
        var rssStart: Int?
        var rssEnd: Int?
        var rssPeak: Int?
        var windowStart: Double
        var fed: Int
        var skipped: Int
        var received: Int
        var summary: [String: String]
        var exitStatus: Int32?

        func share(_ cpu: Double) -> Double { window > 0 ? cpu / window * 100 : 0 }
        func microsecondsPerReport(_ cpu: Double) -> Double { reports > 0 ? cpu / Double(reports) * 1e6 : 0 }
    }

    static func run() {
        do { try measure() } catch { print("  failed: \(error)") }
    }

    static func measure() throws {
        let binary = DaemonBench.gatewayBinary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("  skipped: \(binary) not built (make bench builds it: swift build -c release)")
            return
        }
        let drift = Int(ProcessInfo.processInfo.environment["BENCH_DRIFT_SECONDS"] ?? "").map { max(60, min(3600, $0)) }
        let directory = try DaemonBench.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try BenchBroker(directory: directory)
        defer { broker.stop() }
        let events = try DaemonBenchCapture.beaconEvents(500)
        print(
            "  live path: beaconbridge run --hci-feed (socket pair into the HCIScanner reading thread), 500 iBeacons, "
                + "broker on 127.0.0.1:\(broker.port), scanner.batch_window_ms "
                + (ProcessInfo.processInfo.environment["BENCH_BATCH_WINDOW_MS"]
                    ?? "default (BENCH_BATCH_WINDOW_MS sets it)"))

        // BENCH_LIVE_RUNS (e.g. "live-5000,every-5000") runs only the named runs: an A/B of two binaries
        // (BENCH_GATEWAY) on the one case a change is about, repeated, in the time of one whole run.
        let only = ProcessInfo.processInfo.environment["BENCH_LIVE_RUNS"].map {
            Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        func selected(_ name: String) -> Bool { only?.contains(name) ?? true }
        let wake = wakeUpCost()
        print(
            "  reference: a thread wake-up costs \(DaemonBench.format(wake.bare, 1)) µs of CPU on this machine, "
                + "\(DaemonBench.format(wake.touching, 1)) µs when it then reads 256 KiB (poll with a 5 ms timeout, "
                + "\(wakeUpRounds) times; the gateway wakes about 3 threads per batch window)")
        print("  default publish policy (sightings at most every 5 s per beacon):")
        for rate in [500, 5000] where selected("live-\(rate)") {
            let seconds = rate == 5000 ? drift ?? 40 : 40
            let result = try measureOne(
                binary: binary, directory: directory, broker: broker, name: "live-\(rate)",
                rate: rate, seconds: seconds, everyReport: false, events: events)
            let goal = rate == 5000 ? "< 2 %" : "< 0.5 %"
            print(
                "    \(rate) reports/s for \(seconds) s: gateway CPU \(DaemonBench.format(result.share(result.gatewayCPU), 2)) % of one core "
                    + "(t=\(Int(result.windowStart))...\(Int(result.windowStart + result.window)) s; goal \(goal)), "
                    + "\(DaemonBench.format(result.microsecondsPerReport(result.gatewayCPU), 1)) µs per report")
            print(
                "      RSS \(rss(result.rssStart)) MB at t=\(Int(result.windowStart)) s, \(rss(result.rssEnd)) MB at the end: drift "
                    + "\(driftText(result)) MB (goal < 0.5 MB over 10 minutes); peak \(rss(result.rssPeak)) MB")
            describe(result)
        }

        print(
            "  a sighting published for every report (sighting_interval_s: 0), against mosquitto_sub receiving the same messages:"
        )
        for rate in [100, 500, 5000] where selected("every-\(rate)") {
            let result = try measureOne(
                binary: binary, directory: directory, broker: broker, name: "every-\(rate)",
                rate: rate, seconds: 30, everyReport: true, events: events)
            let gateway = result.microsecondsPerReport(result.gatewayCPU)
            let subscriber = result.microsecondsPerReport(result.subscriberCPU)
            let ratio = subscriber > 0 ? gateway / subscriber : 0
            print(
                "    \(rate) reports/s: gateway \(DaemonBench.format(gateway, 1)) µs CPU per report "
                    + "(\(DaemonBench.format(result.share(result.gatewayCPU), 2)) % of one core), mosquitto_sub "
                    + "\(DaemonBench.format(subscriber, 1)) µs per report: ratio \(DaemonBench.format(ratio, 2)) (goal <= 2)"
            )
            describe(result)
        }
    }

    static let wakeUpRounds = 200

    /// The CPU time one wake-up of a sleeping thread costs here, the unit the low-rate figures are made of: in a
    /// virtual machine it is several times what it is on a Raspberry Pi (docs/daemon-bench.md, session 30).
    /// Measured on this thread: `poll` with no descriptors and a 5 ms timeout, bare and followed by a read of
    /// 256 KiB (about the data a batch window's work touches, so the caches' refill after the sleep counts).
    /// Returns microseconds per wake-up. The corresponding C functions are `poll` and `clock_gettime`.
    static func wakeUpCost() -> (bare: Double, touching: Double) {
        let buffer = [UInt64](repeating: 1, count: 256 * 1024 / 8)
        var checksum: UInt64 = 0
        func measure(touch: Bool) -> Double {
            let start = DecodeBench.threadCPUSeconds()
            for _ in 0..<wakeUpRounds {
                _ = poll(nil, 0, 5)
                if touch { for index in stride(from: 0, to: buffer.count, by: 8) { checksum &+= buffer[index] } }
            }
            return (DecodeBench.threadCPUSeconds() - start) / Double(wakeUpRounds) * 1e6
        }
        let bare = measure(touch: false)
        let touching = measure(touch: true)
        if checksum == 0 { print("  (checksum 0)") }
        return (bare, touching)
    }

    static func describe(_ result: Result) {
        let value = { (key: String) in result.summary[key] ?? "?" }
        print(
            "      fed \(result.fed) reports (\(result.skipped) skipped: gateway behind), gateway: \(value("hci_events")) HCI events, "
                + "\(value("events")) events submitted, \(value("published")) published; subscriber received \(result.received); "
                + "broker CPU \(DaemonBench.format(result.share(result.brokerCPU), 2)) %; exit status "
                + (result.exitStatus.map(String.init) ?? "still running"))
    }

    static func measureOne(
        binary: String, directory: String, broker: BenchBroker, name: String, rate: Int, seconds: Int,
        everyReport: Bool, events: [[UInt8]]
    ) throws -> Result {
        var extra = """
            scanner:
              stall_timeout_s: 0

            """
        if let window = ProcessInfo.processInfo.environment["BENCH_BATCH_WINDOW_MS"], Double(window) != nil {
            extra = extra.replacingOccurrences(
                of: "  stall_timeout_s: 0\n", with: "  stall_timeout_s: 0\n  batch_window_ms: \(window)\n")
        }
        if everyReport {
            extra += """
                tracking:
                  publish:
                    sighting_interval_s: 0
                    sighting_min_distance_m: 0.01

                """
        }
        let port = broker.port
        let config = try DaemonBench.writeConfig(directory: directory, name: name, port: port, extra: extra)
        let received = directory + "/\(name)-received.txt"
        let subscriber = try DaemonBenchProcess(
            "mosquitto_sub", executable: "/usr/bin/mosquitto_sub",
            arguments: ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", "beaconbridge/bench-\(name)/#"],
            stdout: received)
        defer { subscriber.stop() }
        usleep(300_000)

        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw BenchFailure("socketpair: \(String(cString: strerror(errno)))")
        }
        // A full socket (the gateway behind) makes a send wait at most 100 ms, so the feeder can stop.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        _ = setsockopt(pair[0], SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let log = directory + "/\(name).log"
        let gateway: DaemonBenchProcess
        do {
            gateway = try DaemonBenchProcess(
                "beaconbridge", executable: binary,
                arguments: ["run", "--config", config, "--hci-feed", "0"],
                stdin: pair[1], stderr: log)
        } catch {
            close(pair[0])
            close(pair[1])
            throw error
        }
        close(pair[1])
        defer {
            gateway.stop()
            close(pair[0])
        }
        let feeder = LiveBenchFeeder(descriptor: pair[0], rate: rate, events: events)
        usleep(500_000)

        struct Sample {
            var time: Double
            var cpu: [Double?]
            var rss: Int?
            var fed: Int
            var gatewayThreads: [String: Double]?
        }
        // The broker is shared by the runs: only its difference over the window counts.
        let processes = [gateway, subscriber, broker.process]
        func sample(_ time: Double) -> Sample {
            Sample(
                time: time, cpu: processes.map(\.cpuSeconds), rss: gateway.residentBytes, fed: feeder.sent,
                gatewayThreads: gateway.threadRunTimes)
        }
        feeder.start()
        let start = Date()
        var samples: [Sample] = []
        var next = sampleInterval
        while Date().timeIntervalSince(start) < Double(seconds) + 0.01, gateway.isRunning {
            let elapsed = Date().timeIntervalSince(start)
            if elapsed >= next {
                next += sampleInterval
                samples.append(sample(elapsed))
            }
            usleep(50_000)
        }
        samples.append(sample(Date().timeIntervalSince(start)))
        feeder.stop()
        usleep(300_000)
        gateway.stop(grace: 10)
        let status = gateway.waitForExit(timeout: 1)
        usleep(500_000)
        subscriber.stop()

        let mark = seconds >= 120 ? 60.0 : Double(seconds) / 4
        let complete = samples.filter { $0.cpu[0] != nil && $0.cpu[1] != nil }
        guard let first = complete.first(where: { $0.time >= mark - 0.5 }) ?? complete.first, let last = complete.last
        else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw BenchFailure(
                "no samples of the gateway; it exited with \(status.map(String.init) ?? "?"): \(text.suffix(600))")
        }
        func delta(_ index: Int) -> Double { (last.cpu[index] ?? 0) - (first.cpu[index] ?? 0) }
        let window = complete.filter { $0.time >= first.time && $0.time <= last.time }
        let gatewayCPU = threadCPU(window.map(\.gatewayThreads)) ?? delta(0)
        let lines = (try? String(contentsOfFile: received, encoding: .utf8))?.split(separator: "\n").count ?? 0
        return Result(
            rate: rate, window: last.time - first.time, reports: last.fed - first.fed,
            gatewayCPU: gatewayCPU, subscriberCPU: delta(1), brokerCPU: delta(2),
            rssStart: first.rss, rssEnd: last.rss, rssPeak: complete.compactMap(\.rss).max(),
            windowStart: first.time, fed: feeder.sent, skipped: feeder.skipped, received: lines,
            summary: DaemonBench.stoppedSummary(log: log), exitStatus: status)
    }

    /// The CPU a process's threads spent between the first and the last of `samples` (thread id → run time),
    /// from their `schedstat`: each thread from its reading in the first sample (0 for one started later) to its
    /// last reading (dispatch's worker threads come and go; one that ended is counted up to its last sample, at
    /// most one sample interval short). Nil without the first or last reading (the ticks are used then).
    static func threadCPU(_ samples: [[String: Double]?]) -> Double? {
        guard let first = samples.first ?? nil, samples.last ?? nil != nil else { return nil }
        var latest: [String: Double] = [:]
        for sample in samples { for (thread, time) in sample ?? [:] { latest[thread] = time } }
        // A reading below the first one is a new thread that reused an ended one's id: all of it counts.
        return latest.reduce(0) { total, entry in
            let start = first[entry.key] ?? 0
            return total + (entry.value >= start ? entry.value - start : entry.value)
        }
    }

    static func rss(_ bytes: Int?) -> String { bytes.map(DaemonBench.mb) ?? "n/a" }

    static func driftText(_ result: Result) -> String {
        guard let from = result.rssStart, let to = result.rssEnd else { return "n/a" }
        return DaemonBench.format(Double(to - from) / 1_048_576, 2)
    }
}
