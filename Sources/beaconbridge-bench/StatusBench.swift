import Foundation
import TestSupport

/// What the status page and `/metrics` cost (`http:`, issue 44's goals; docs/daemon-bench.md, "The status page"):
/// four release gateways at once, each `beaconbridge replay --speed 1` to a real mosquitto on a free loopback port,
/// for `BENCH_STATUS_SECONDS` (default 60, 30...600):
/// - `busy-off` and `busy-on`: the same capture of 1,000 iBeacons at 1 report/s each, `http:` off and on. At 40 % of
///   the run the bench loads the page of `busy-on` once (its beacons are copied from then on), then times 20
///   `/metrics` scrapes and 20 page loads on loopback (connect to close); RSS is the median of the samples from
///   half-time to the end, on against off.
/// - `idle-off` and `idle-on`: a capture with nothing to track (one non-beacon report a second), `http:` off and
///   on, nobody ever connected to `idle-on`: the CPU of its `bb-http` thread (`schedstat`, nanoseconds) and its
///   wake-ups (context switches) from half-time to the end, and both processes' CPU over the same window.
/// Bounded: the gateways are stopped at the capture's end + 90 s at the latest, and on the way out.
enum StatusBench {
    static func run() {
        do { try measure() } catch { print("  failed: \(error)") }
    }

    static func measure() throws {
        let seconds = max(30, min(600, Int(ProcessInfo.processInfo.environment["BENCH_STATUS_SECONDS"] ?? "") ?? 60))
        let binary = DaemonBench.gatewayBinary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("  skipped: \(binary) not built (make bench builds it: swift build -c release)")
            return
        }
        let directory = try DaemonBench.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try BenchBroker(directory: directory)
        let start = Date().timeIntervalSince1970.rounded()
        _ = try DaemonBenchCapture.write(
            path: directory + "/many.btsnoop", beacons: 1000, rate: 1, seconds: seconds, start: start)
        try DaemonBenchCapture.writeIdle(path: directory + "/idle.btsnoop", seconds: seconds + 10, start: start)
        let busyPort = try FreePort.find()
        let idlePort = try FreePort.find()
        print(
            "  1,000 beacons x 1 report/s for \(seconds) s (http: off and on), and an idle capture (off and on), replay at speed 1"
        )
        func gateway(_ name: String, capture: String, httpPort: Int?) throws -> DaemonBenchProcess {
            let http = httpPort.map { "http:\n  enabled: true\n  port: \($0)\n" } ?? ""
            let config = try DaemonBench.writeConfig(directory: directory, name: name, port: broker.port, extra: http)
            return try DaemonBenchProcess(
                name, executable: binary,
                arguments: ["replay", directory + "/" + capture, "--speed", "1", "--config", config],
                stderr: directory + "/\(name).log")
        }
        let busyOff = try gateway("busy-off", capture: "many.btsnoop", httpPort: nil)
        let busyOn = try gateway("busy-on", capture: "many.btsnoop", httpPort: busyPort)
        let idleOff = try gateway("idle-off", capture: "idle.btsnoop", httpPort: nil)
        let idleOn = try gateway("idle-on", capture: "idle.btsnoop", httpPort: idlePort)
        let gateways = [busyOff, busyOn, idleOff, idleOn]
        defer { for process in gateways { process.stop() } }

        var timings: Timings?
        var idleThread: (start: ThreadFigures?, end: ThreadFigures?) = (nil, nil)
        let half = Double(seconds) / 2
        let sampler = DaemonBenchSampler(processes: gateways, interval: DaemonBench.sampleInterval)
        sampler.run(
            until: busyOn, deadline: Double(seconds) + 90,
            actions: [
                (Double(seconds) * 0.4, { timings = measureRequests(port: busyPort) }),
                (half, { idleThread.start = ThreadFigures.read(pid: idleOn.pid, thread: "bb-http") }),
                (Double(seconds) - 2, { idleThread.end = ThreadFigures.read(pid: idleOn.pid, thread: "bb-http") }),
            ])
        report(sampler: sampler, from: half, timings: timings, idleThread: idleThread)
        for process in gateways {
            if let status = process.waitForExit(timeout: 15), status != 0 {
                print("    \(process.name) exited with \(status) (log \(directory)/\(process.name).log)")
            }
        }
    }

    /// Round trips on loopback, milliseconds, with the response's size and what it said.
    struct Timings {
        var scrape: [Double] = []
        var scrapeBytes = 0
        var tracked = "?"
        var page: [Double] = []
        var pageBytes = 0
        var listed = 0
        var failures = 0
    }

    static func measureRequests(port: Int) -> Timings {
        var timings = Timings()
        // The first view starts the loop's copy of the beacons; the page lists them from its next copy (1 s).
        _ = HTTPTestClient.request(port: port, "/")
        usleep(1_500_000)
        /// 20 requests of `path`: the round trips (ms) of those answered 200, and the last such response.
        func timed(_ path: String) -> (milliseconds: [Double], last: HTTPTestClient.Response?) {
            var times: [Double] = []
            var last: HTTPTestClient.Response?
            for _ in 0..<20 {
                let begin = DispatchTime.now().uptimeNanoseconds
                let response = HTTPTestClient.request(port: port, path)
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e6
                guard response.status == 200 else {
                    timings.failures += 1
                    continue
                }
                times.append(elapsed)
                last = response
            }
            return (times, last)
        }
        let scrapes = timed("/metrics")
        timings.scrape = scrapes.milliseconds
        if let body = scrapes.last?.body {
            timings.scrapeBytes = body.utf8.count
            let prefix = "beaconbridge_beacons_tracked "
            if let line = body.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) {
                timings.tracked = String(line.dropFirst(prefix.count))
            }
        }
        let pages = timed("/")
        timings.page = pages.milliseconds
        if let body = pages.last?.body {
            timings.pageBytes = body.utf8.count
            timings.listed = body.components(separatedBy: "<tr class=\"beacon\">").count - 1
        }
        return timings
    }

    /// One thread's CPU (`schedstat`, nanoseconds) and voluntary context switches (`status`), found by its name.
    struct ThreadFigures {
        var cpuNanoseconds: Double
        var switches: Int

        static func read(pid: Int32, thread name: String) -> ThreadFigures? {
            let tasks = "/proc/\(pid)/task"
            for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
                let comm = (try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8)) ?? ""
                guard comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                    let schedstat = try? String(contentsOfFile: "\(tasks)/\(tid)/schedstat", encoding: .utf8),
                    let cpu = schedstat.split(separator: " ").first.flatMap({ Double($0) }),
                    let status = try? String(contentsOfFile: "\(tasks)/\(tid)/status", encoding: .utf8)
                else { continue }
                // A sleep in poll() ended by a wake-up is one voluntary switch.
                let switches =
                    status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                    .flatMap {
                        Int($0.dropFirst("voluntary_ctxt_switches:".count).trimmingCharacters(in: .whitespaces))
                    }
                    ?? 0
                return ThreadFigures(cpuNanoseconds: cpu, switches: switches)
            }
            return nil
        }
    }

    static func report(
        sampler: DaemonBenchSampler, from: Double, timings: Timings?,
        idleThread: (start: ThreadFigures?, end: ThreadFigures?)
    ) {
        let window = sampler.samples.filter { $0.time >= from }
        func medianRSS(_ index: Int) -> Int? {
            let values = window.compactMap { $0.rss[index] }.sorted()
            return values.isEmpty ? nil : values[values.count / 2]
        }
        if let off = medianRSS(0), let on = medianRSS(1) {
            print(
                "    RSS with 1,000 beacons (median from t=\(Int(from)) s): http off \(DaemonBench.mb(off)) MB, on \(DaemonBench.mb(on)) MB "
                    + "(page viewed, scraped): \(String(format: "%+.2f", Double(on - off) / 1_048_576)) MB; goal at most +1.5 MB"
            )
        } else {
            print("    RSS: no samples of both gateways")
        }
        if let first = window.first, let last = window.last, last.time > first.time {
            func share(_ index: Int) -> String {
                guard let from = first.cpu[index], let to = last.cpu[index] else { return "n/a" }
                return DaemonBench.format((to - from) / (last.time - first.time) * 100, 2) + " %"
            }
            var line =
                "    idle, nobody connected (t=\(Int(first.time))...\(Int(last.time)) s): gateway CPU http off \(share(2)), on \(share(3))"
            if let start = idleThread.start, let end = idleThread.end {
                line +=
                    "; the bb-http thread: \(DaemonBench.format((end.cpuNanoseconds - start.cpuNanoseconds) / 1e6, 3)) ms CPU, "
                    + "\(end.switches - start.switches) wake-ups; goal no CPU at idle"
            } else {
                line += "; the bb-http thread: not found"
            }
            print(line)
        }
        guard let timings else {
            print("    scrape and page load: not measured (the run ended first)")
            return
        }
        func summary(_ values: [Double]) -> String {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return "no answer" }
            return
                "median \(DaemonBench.format(sorted[sorted.count / 2], 2)) ms, max \(DaemonBench.format(sorted[sorted.count - 1], 2)) ms"
        }
        print(
            "    one /metrics scrape with \(timings.tracked) beacons tracked (20 on loopback): \(summary(timings.scrape)), "
                + "\(timings.scrapeBytes) bytes; goal < 5 ms")
        print(
            "    one page load, same gateway and run (20): \(summary(timings.page)), \(timings.pageBytes) bytes, "
                + "\(timings.listed) beacons listed"
                + (timings.failures > 0 ? "; \(timings.failures) requests not answered 200" : ""))
    }
}
