import BeaconModel
import BeaconSimulation

/// `beaconbridge simulate --capture OUT.btsnoop`: writes the scenario's radio traffic as a btsnoop capture of
/// HCI LE Advertising Report events, for `beaconbridge replay` or `decode --btsnoop`. iBeacon, AltBeacon,
/// Eddystone-UID beacons and Ruuvi, Govee and BTHome sensors (their registry frame) are written; other formats
/// have no synthetic payload and are skipped (counted on stderr). Reports a scenario's gateway would miss while down for a restart (`restarts_s`) are left out.
enum SimulateCapture {
    /// Writes the capture; nil on success, else the exit code after printing why.
    static func write(_ scenario: Scenario, to path: String) -> Int32? {
        let downtimes = scenario.restarts.map {
            Dropout(start: scenario.startTime + $0, duration: scenario.restartDowntime)
        }
        do throws(SyntheticCaptureFile.Failure) {
            let file = try SyntheticCaptureFile(path: path)
            var first: Timestamp?
            var last: Timestamp = 0
            for observation in ScenarioSimulator(scenario).observations()
            where !downtimes.contains(where: { $0.contains(observation.timestamp) }) {
                try file.append(observation)
                first = first ?? observation.timestamp
                last = observation.timestamp
            }
            try file.finish()
            let span = first.map { last - $0 } ?? 0
            var line = "capture: \(path): \(file.events) advertising report events over \(span.formatted1) s"
            if file.skipped > 0 {
                line += "; \(file.skipped) observations skipped (formats without a synthetic payload)"
            }
            Output.stderr(line)
            return nil
        } catch {
            Output.stderr("beaconbridge simulate: cannot write the capture: \(error)")
            return error.isCreation ? ExitCode.cantCreate : ExitCode.ioError
        }
    }
}

extension Double {
    /// One decimal, without Foundation.
    fileprivate var formatted1: String {
        let tenths = (self * 10).rounded()
        return "\(Int(tenths) / 10).\(abs(Int(tenths)) % 10)"
    }
}
