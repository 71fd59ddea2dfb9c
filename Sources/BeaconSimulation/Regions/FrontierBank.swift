import BeaconModel

/// The detectors of one (region, beacon) pair for a list of `FrontierRule`s: one window of reports per distinct
/// window length, shared by the rules that use it.
struct FrontierBank {
    private struct Window {
        var length: Double
        var times: [Double] = []
        var values: [Double] = []
        var head = 0
        var sum = 0.0

        mutating func add(_ value: Double, at time: Double) -> Double {
            times.append(time)
            values.append(value)
            sum += value
            while head < times.count - 1, times[head] < time - length {
                sum -= values[head]
                head += 1
            }
            if head > 256, head * 2 > times.count {
                times.removeFirst(head)
                values.removeFirst(head)
                head = 0
                sum = values.reduce(0, +)
            }
            return sum / Double(times.count - head)
        }
    }

    private struct Detector {
        var window: Int
        var enterLevel: Double
        var timeout: Double
        var state = RegionState.unknown
        var lastAbove = -Double.infinity
    }

    private var windows: [Window] = []
    private var detectors: [Detector] = []
    private let exitLevel: Double

    init(rules: [FrontierRule], enterLevel: Double, exitLevel: Double, exitPeriod: Double) {
        self.exitLevel = exitLevel
        for rule in rules {
            if !windows.contains(where: { $0.length == rule.window }) { windows.append(Window(length: rule.window)) }
            let index = windows.firstIndex { $0.length == rule.window } ?? 0
            detectors.append(
                Detector(window: index, enterLevel: enterLevel + rule.offset, timeout: rule.timeout(exitPeriod)))
        }
    }

    /// The state of rule `index`.
    func state(_ index: Int) -> RegionState { detectors[index].state }

    /// One report: the transitions it causes, as (rule index, kind), overdue exits first.
    mutating func observe(rssi: Int, at time: Double, into result: inout [(Int, TruthTransition.Kind)]) {
        advance(to: time, into: &result)
        let means = windows.indices.map { windows[$0].add(Double(rssi), at: time) }
        for index in detectors.indices {
            let mean = means[detectors[index].window]
            if mean >= exitLevel { detectors[index].lastAbove = time }
            if detectors[index].state != .inside, mean > detectors[index].enterLevel {
                detectors[index].state = .inside
                detectors[index].lastAbove = time
                result.append((index, .enter))
            } else if detectors[index].state == .unknown {
                detectors[index].state = .outside
            }
        }
    }

    /// Fires the exit timeouts due at `time`.
    mutating func advance(to time: Double, into result: inout [(Int, TruthTransition.Kind)]) {
        for index in detectors.indices
        where detectors[index].state == .inside && time - detectors[index].lastAbove >= detectors[index].timeout {
            detectors[index].state = .outside
            result.append((index, .exit))
        }
    }
}
