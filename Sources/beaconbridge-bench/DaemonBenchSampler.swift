import Foundation

/// Samples CPU time and RSS of a set of processes every `interval` seconds, timed from its start.
final class DaemonBenchSampler {
    struct Sample {
        var time: Double
        var cpu: [Double?]
        var rss: [Int?]
    }

    let processes: [DaemonBenchProcess]
    let interval: Double
    private(set) var samples: [Sample] = []

    init(processes: [DaemonBenchProcess], interval: Double) {
        self.processes = processes
        self.interval = interval
    }

    /// Samples until `watched` exits or `deadline` seconds pass (then stops it). `actions` run once each, on this
    /// thread, when the run reaches their time (seconds from its start); a sample is not taken while one runs.
    func run(until watched: DaemonBenchProcess, deadline: Double, actions: [(at: Double, run: () -> Void)] = []) {
        let start = Date()
        var next = interval
        var pending = actions.sorted { $0.at < $1.at }
        while watched.isRunning {
            if let action = pending.first, Date().timeIntervalSince(start) >= action.at {
                pending.removeFirst()
                action.run()
            }
            let elapsed = Date().timeIntervalSince(start)
            if elapsed > deadline {
                print("    \(watched.name) still running after \(Int(deadline)) s: stopped")
                watched.stop()
                return
            }
            if elapsed >= next {
                next += interval
                let sample = Sample(
                    time: elapsed, cpu: processes.map(\.cpuSeconds), rss: processes.map(\.residentBytes))
                // A sample taken as the process exits reads nothing: keep only complete ones.
                if sample.cpu[0] != nil { samples.append(sample) }
            }
            usleep(50_000)
        }
    }
}
